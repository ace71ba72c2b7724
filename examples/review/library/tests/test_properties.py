from hypothesis import given
from hypothesis import strategies as st
from rangeset import contains, normalize, total

ranges = st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 10)).map(lambda p: (p[0], p[0] + p[1])), max_size=8)


@given(ranges)
def test_total_is_the_number_of_members(rs):
    members = {n for s, e in rs for n in range(s, e + 1)}
    assert total(rs) == len(members)


@given(ranges, st.integers(-60, 70))
def test_contains_agrees_with_membership(rs, n):
    members = {m for s, e in rs for m in range(s, e + 1)}
    assert contains(normalize(rs), n) == (n in members)


@given(ranges)
def test_normalize_is_idempotent(rs):
    assert normalize(normalize(rs)) == normalize(rs)
