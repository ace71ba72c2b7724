from geometry import perimeter
from units import to_cm


def test_units():
    assert to_cm(2, "m") == 200
    assert to_cm(5, "mm") == 0.5


def test_perimeter_in_cm():
    assert perimeter([1, 2, 3], "m") == 600
