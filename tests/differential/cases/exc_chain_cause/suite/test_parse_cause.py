import pytest
from solution import parse_pair


def test_the_cause_is_kept():
    with pytest.raises(ValueError) as info:
        parse_pair("x")
    assert isinstance(info.value.__cause__, ValueError)
    assert "unpack" in str(info.value.__cause__)
