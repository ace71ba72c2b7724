import pytest
from solution import Countdown


def test_values():
    assert list(Countdown(3)) == [3, 2, 1]


def test_empty():
    assert list(Countdown(0)) == []


def test_exhausted_stays_exhausted():
    c = Countdown(1)
    assert next(c) == 1
    with pytest.raises(StopIteration):
        next(c)
    assert next(c, "done") == "done"
