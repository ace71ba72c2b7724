from solution import harmonic


def test_numerator_and_denominator():
    h = harmonic(3)
    assert (h.numerator, h.denominator) == (11, 6)


def test_text():
    assert str(harmonic(4)) == "25/12"
