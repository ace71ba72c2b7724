from solution import Point


def test_value_equality():
    assert Point(1, 2) == Point(1, 2)
