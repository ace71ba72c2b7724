"""Example-based tests of find_duplicates. Expected values on the left; results type-checked."""

import pytest
from solution import find_duplicates


def check(values, expected):
    result = find_duplicates(values)
    assert type(result) is list, f"expected a list, got {type(result).__name__}"
    assert expected == result


def test_tutorial_example():
    check([1, 2, 2, 3, 1], [2, 1])


def test_empty():
    check([], [])


def test_no_duplicates():
    check([1, 2, 3], [])


def test_each_duplicate_once():
    check([5, 5, 5, 5], [5])


def test_order_is_by_second_occurrence():
    # 3 and 1 both repeat; 1's second occurrence (index 3) comes before 3's (index 4).
    check([3, 1, 2, 1, 3], [1, 3])


def test_unhashable_nested_lists():
    check([[1], [1]], [[1]])


def test_unhashable_mixed():
    check([[1, 2], {"a": 1}, [1, 2], {"a": 1}, 3, 3], [[1, 2], {"a": 1}, 3])


def test_equal_but_distinct_types():
    # 1 == 1.0 == True in Python; the task compares with ==.
    check([1, 1.0], [1])


def test_does_not_mutate_input():
    values = [[1], 2, [1], 2]
    snapshot = [[1], 2, [1], 2]
    find_duplicates(values)
    assert snapshot == values


@pytest.mark.parametrize("values", [["a", "b", "a"], [None, None], [(1, 2), (1, 2)]])
def test_other_types(values):
    check(values, [values[0]])
