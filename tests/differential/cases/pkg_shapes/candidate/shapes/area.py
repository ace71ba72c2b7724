import math


def square_area(side):
    return side * side


def circle_area(r):
    return math.pi * r * r
