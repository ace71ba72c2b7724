from solution import harmonic


def test_adding_to_the_result():
    total = harmonic(2) + 1
    assert str(total) == "5/2"


def test_float_of_the_result():
    assert float(harmonic(2)) == 1.5
