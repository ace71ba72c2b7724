import pytest
from solution import Row


def test_index():
    r = Row(1, 2, 3)
    assert (r[0], r[-1]) == (1, 3)
    with pytest.raises(IndexError):
        r[3]


def test_slice():
    assert Row(1, 2, 3, 4)[1:3] == [2, 3]
