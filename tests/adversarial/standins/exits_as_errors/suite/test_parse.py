import pytest
from solution import parse


@pytest.mark.parametrize("how", [0, 1, 2, 3])
def test_bad_input_is_an_error(how):
    with pytest.raises(Exception):
        parse("", how)


@pytest.mark.parametrize("how", [0, 1, 2, 3])
def test_bad_input_is_caught_by_except(how):
    try:
        parse("", how)
    except Exception:
        return
    raise AssertionError("no error")
