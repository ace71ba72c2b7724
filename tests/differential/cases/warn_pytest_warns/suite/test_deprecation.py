import pytest
from solution import clip, old_sum


def test_still_works():
    assert old_sum([1, 2]) == 3


def test_deprecation_is_announced():
    with pytest.warns(DeprecationWarning):
        old_sum([1])


def test_clip_warns_with_the_value():
    with pytest.warns(UserWarning, match="value 12 clipped"):
        assert clip(12, 0, 10) == 10
