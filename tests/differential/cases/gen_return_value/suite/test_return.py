import pytest
from solution import summing


def test_running_totals():
    assert list(summing([1, 2, 3])) == [1, 3, 6]


def test_the_generator_returns_the_total():
    g = summing([4, 5])
    next(g)
    next(g)
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == 9
