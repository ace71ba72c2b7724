import pytest
from solution import parse_age, safe_ratio


def test_valid_age():
    assert parse_age("42") == 42


def test_negative_age_is_a_value_error():
    with pytest.raises(ValueError, match="negative"):
        parse_age("-1")


def test_non_numeric_age_is_a_value_error():
    with pytest.raises(ValueError):
        parse_age("forty")


def test_zero_division_propagates():
    with pytest.raises(ZeroDivisionError):
        safe_ratio(1, 0, strict=True)
    assert safe_ratio(1, 0) == float("inf")
