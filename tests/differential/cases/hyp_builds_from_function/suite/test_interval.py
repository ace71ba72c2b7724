from hypothesis import given
from hypothesis import strategies as st
from solution import make_interval


@given(st.builds(make_interval, st.integers(-50, 50), st.integers(-50, 50)))
def test_length_is_never_negative(interval):
    assert interval.length() >= 0
