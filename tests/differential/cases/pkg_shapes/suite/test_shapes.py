from shapes import Square, describe
from shapes.area import circle_area


def test_square():
    assert Square(3).area() == 9


def test_circle_area():
    assert round(circle_area(1), 5) == 3.14159


def test_describe():
    assert describe(Square(2)) == "Square with area 4"
