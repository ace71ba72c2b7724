"""Hypothesis property tests of find_duplicates, against a trusted reference.

Expected values come from a copy of the input taken BEFORE the call: a candidate that empties
its input and returns [] must not make the expectation agree with it.
"""

import copy

from hypothesis import given
from hypothesis import strategies as st
from solution import find_duplicates

scalars = st.integers(-3, 3) | st.sampled_from(["a", "b"])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=2), max_leaves=4)


def reference(items):
    seen, out = [], []
    for item in items:
        if item in seen:
            if item not in out:
                out.append(item)
        else:
            seen.append(item)
    return out


@given(st.lists(values, max_size=12))
def test_matches_reference(items):
    expected = reference(copy.deepcopy(items))
    result = find_duplicates(items)
    assert type(result) is list
    assert expected == result


@given(st.lists(st.lists(st.integers(0, 2), max_size=2), max_size=10))
def test_unhashable_values_are_supported(items):
    expected = reference(copy.deepcopy(items))
    assert expected == find_duplicates(items)


@given(st.lists(values, max_size=12))
def test_each_duplicate_once(items):
    original = copy.deepcopy(items)
    result = find_duplicates(items)
    assert type(result) is list
    for i, item in enumerate(result):
        assert item not in result[:i]
        assert sum(1 for x in original if x == item) >= 2


@given(st.lists(values, max_size=12))
def test_input_not_mutated(items):
    before = copy.deepcopy(items)
    find_duplicates(items)
    assert before == items
