from hypothesis import given
from hypothesis import strategies as st
from solution import chunks


def test_even_split():
    assert list(chunks([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]


def test_short_last_chunk():
    assert list(chunks([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]


@given(st.lists(st.integers(), max_size=20), st.integers(1, 5))
def test_concatenation_gives_the_input(items, n):
    parts = list(chunks(items, n))
    assert [x for part in parts for x in part] == items
    assert all(len(p) == n for p in parts[:-1])
