from hypothesis import given
from hypothesis import strategies as st
from solution import LRU


@st.composite
def filled(draw):
    cache = LRU(draw(st.integers(1, 3)))
    for key in draw(st.lists(st.integers(0, 9), max_size=8)):
        cache.put(key, key * 10)
    return cache


@given(filled())
def test_values_match_keys(cache):
    keys = cache.keys()
    for key in keys:
        assert cache.get(key) == key * 10
