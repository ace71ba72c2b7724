"""The unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k)."""

from __future__ import annotations

from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) passes."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    prob_all_fail = 1.0
    for i in range(n - c + 1, n + 1):
        prob_all_fail *= 1.0 - k / i
    return 1.0 - prob_all_fail


def mean_pass_at_k(per_task: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean over tasks with n >= k of pass@k; None when no task has enough samples."""
    values = [pass_at_k(n, c, k) for n, c in per_task if n >= k]
    return sum(values) / len(values) if values else None
