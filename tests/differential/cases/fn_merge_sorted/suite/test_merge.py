from hypothesis import given
from hypothesis import strategies as st
from solution import merge_sorted


def test_basic():
    assert merge_sorted([1, 3, 5], [2, 4, 6]) == [1, 2, 3, 4, 5, 6]


def test_empty_b():
    assert merge_sorted([1, 2], []) == [1, 2]


def test_empty_a():
    assert merge_sorted([], [1]) == [1]


@given(st.lists(st.integers()), st.lists(st.integers()))
def test_matches_sorted(a, b):
    a, b = sorted(a), sorted(b)
    assert merge_sorted(a, b) == sorted(a + b)
