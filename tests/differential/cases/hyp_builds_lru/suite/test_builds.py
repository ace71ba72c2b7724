from hypothesis import given
from hypothesis import strategies as st
from solution import LRU

OPS = st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=20)


def test_example():
    c = LRU(2)
    c.put(1, "a")
    c.put(2, "b")
    c.put(3, "c")
    assert c.keys() == [2, 3]


@given(st.builds(LRU, st.integers(1, 4)), OPS)
def test_never_over_capacity(cache, ops):
    for key, value in ops:
        cache.put(key, value)
        assert len(cache) <= cache.capacity
        assert cache.get(key) == value
