import pytest
from solution import lookup, validate_age


def test_accepts_ages():
    assert validate_age(30) == 30


def test_rejects_negative_ages():
    with pytest.raises(ValueError):
        validate_age(-1)


def test_missing_key():
    with pytest.raises(KeyError):
        lookup({"a": 1}, "b")
