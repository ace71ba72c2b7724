import math


def square_area(side):
    return side * side


def circle_area(r):
    return 2 * math.pi * r
