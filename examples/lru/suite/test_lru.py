"""An LRU cache class, tested through handles: every result the tests compare is plain data."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from solution import LRU


def test_get_after_put():
    c = LRU(2)
    c.put(1, 1)
    assert c.get(1) == 1


def test_missing_key_gives_the_default():
    assert LRU(2).get("nope", -1) == -1


def test_least_recently_used_is_evicted():
    c = LRU(2)
    c.put(1, "a")
    c.put(2, "b")
    c.get(1)  # 1 is now the most recently used
    c.put(3, "c")
    assert c.get(2) is None
    assert c.keys() == [1, 3]


def test_len_contains_and_iteration():
    c = LRU(3)
    for k in "xyz":
        c.put(k, k.upper())
    assert len(c) == 3
    assert "y" in c and "q" not in c
    assert list(c) == ["x", "y", "z"]


def test_instances_are_of_the_class():
    assert isinstance(LRU(1), LRU)
    assert not isinstance([1], LRU)


def test_capacity_is_validated():
    with pytest.raises(ValueError):
        LRU(0)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=30), st.integers(1, 4))
def test_matches_a_reference(ops, capacity):
    c, ref = LRU(capacity), []
    for key, value in ops:
        c.put(key, value)
        ref = [k for k in ref if k[0] != key] + [(key, value)]
        ref = ref[-capacity:]
    assert c.keys() == [k for k, _ in ref]
    for key, value in ref:
        assert c.get(key) == value
