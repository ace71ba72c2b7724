from decimal import Decimal

from solution import parse_price


def test_text():
    assert str(parse_price(" $4.50 ")) == "4.50"


def test_returns_a_decimal_not_a_float():
    assert isinstance(parse_price("1.10"), Decimal)
