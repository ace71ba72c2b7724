import pytest
from solution import parse_pair


def test_parses():
    assert parse_pair("a = 3") == ("a", 3)


def test_error_is_a_value_error_naming_the_input():
    with pytest.raises(ValueError, match="not a pair"):
        parse_pair("nonsense")
