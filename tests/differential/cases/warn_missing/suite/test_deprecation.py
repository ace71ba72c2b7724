import pytest
from solution import old_sum


def test_still_works():
    assert old_sum([1, 2]) == 3


def test_deprecation_is_announced():
    with pytest.warns(DeprecationWarning):
        old_sum([1])
