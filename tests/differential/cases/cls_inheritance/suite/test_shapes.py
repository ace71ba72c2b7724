import pytest
from solution import Circle, Shape, Square


def test_polymorphism():
    assert [s.area() for s in (Square(2), Square(3))] == [4, 9]
    assert Circle(1).describe() == "Circle of area 3.14"


def test_instances_of_the_base():
    assert isinstance(Square(1), Shape)
    assert not isinstance(Square(1), Circle)


def test_subclasses():
    assert issubclass(Square, Shape)


def test_abstract_area():
    with pytest.raises(NotImplementedError):
        Shape().area()
