from hypothesis import given
from hypothesis import strategies as st
from solution import LRU


@given(st.integers(1, 4), st.data())
def test_against_a_model(capacity, data):
    cache, model = LRU(capacity), []
    for _ in range(data.draw(st.integers(0, 15), label="steps")):
        key = data.draw(st.integers(0, 5), label="key")
        cache.put(key, key)
        model = [k for k in model if k != key] + [key]
        model = model[-capacity:]
        assert cache.keys() == model
