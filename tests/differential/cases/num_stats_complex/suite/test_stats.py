import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from solution import mean, median, roots


def test_median_odd_and_even():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_mean():
    assert mean([1, 2, 3, 4]) == pytest.approx(2.5)
    assert math.isnan(mean([]))


def test_complex_roots():
    assert sorted(roots(1, 0, 1), key=lambda z: z.imag) == [-1j, 1j]
    assert roots(1, -3, 2) == (2 + 0j, 1 + 0j)


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=15))
def test_median_is_between_extremes(xs):
    assert min(xs) <= median(xs) <= max(xs)
