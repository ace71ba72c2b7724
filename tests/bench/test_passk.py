from __future__ import annotations

from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.bench.passk import mean_pass_at_k, pass_at_k


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_the_combinatorial_definition(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_edges_and_means() -> None:
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert mean_pass_at_k([(5, 1), (5, 5)], 1) == pytest.approx(0.6)
    assert mean_pass_at_k([(5, 1)], 10) is None
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
