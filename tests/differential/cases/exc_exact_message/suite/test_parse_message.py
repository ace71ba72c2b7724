import pytest
from solution import parse_pair


def test_exact_message():
    with pytest.raises(ValueError) as info:
        parse_pair("x")
    assert str(info.value) == "not a pair: 'x'"
