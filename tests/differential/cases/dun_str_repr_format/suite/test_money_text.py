from solution import Money


def test_repr_and_str():
    m = Money(1205)
    assert repr(m) == "Money(1205)"
    assert str(m) == "12.05 EUR"
    assert f"{m}" == "12.05 EUR"


def test_format_spec():
    assert f"{Money(1250):short}" == "12.5"
