from fractions import Fraction

from solution import harmonic


def test_equals_a_fraction():
    assert harmonic(3) == Fraction(11, 6)
