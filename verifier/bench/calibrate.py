"""Per-problem time limits from the canonical solutions: EvalPlus's rule,
`limit = max(min, FACTOR x canonical time)` (EvalPlus: `--min-time-limit` 4 s,
`--gt-time-limit-factor` 4), instead of one fixed limit for every problem.

The canonical solution of each problem runs once in the sandbox, with the problem's own tests
and a generous limit (`MEASURE_CALL_S`); its *charged* time (the tests' time in the sandbox less
the time a busy host kept it waiting, `runner/clock.py`) is the canonical time. That measurement
is evidence like any other, kept in a user-wide evidence store (`cache_path`), so its key is the
evidence_id: the canonical's bytes, the problem's suite, the image and the measuring limits. A
problem measured once is never measured again until one of those changes.

The limit is per call into the candidate, as `--timeout` is: a problem whose check makes many
calls gets FACTOR x the whole check's time for each call, which is never less than FACTOR x any
one call of the canonical solution. Because the limit is charged time, a busy host cannot push a
correct sample over it, so a minimum far below EvalPlus's 4 s stays fair (docs/performance.md).
A problem without a canonical solution, or whose canonical solution does not pass its own tests,
keeps the fixed limit, and the run says which.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.bench import harness
from verifier.bench.datasets import Problem
from verifier.bench.passk import EVALPLUS_MIN_S, RUN_SLACK_S
from verifier.bench.store import EvidenceStore
from verifier.evidence import Evidence
from verifier.inputs import Candidate
from verifier.verify import Verifier

#: The per-call limit a canonical solution is measured under.
MEASURE_CALL_S = 60.0


def cache_path() -> Path:
    """The canonical measurements' store, beside the project's other caches."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "verifier" / "bench" / "canonical-evidence.jsonl"


@dataclass(frozen=True)
class LimitRule:
    """EvalPlus's rule: each problem's limit is max(min_s, factor x its canonical time)."""

    factor: float
    min_s: float = EVALPLUS_MIN_S

    def limit(self, canonical_s: float) -> float:
        return round(max(self.min_s, self.factor * canonical_s), 3)


def charged_s(ev: Evidence) -> float:
    """The charged time of a run's tests: their time in the sandbox less the host's wait."""
    return max(0.0, ev.durations.tests_s - ev.durations.host_wait_s)


@dataclass(frozen=True)
class Calibration:
    """What the rule gave: the problems with their own limits, each canonical time, how many
    canonical runs were measured now (the rest came from the cache), and the problems that
    keep the fixed limit (no canonical solution, or one that does not pass)."""

    problems: dict[str, Problem]
    canonical_s: dict[str, float]
    measured: int
    kept_fixed: list[str]

    def summary(self, rule: LimitRule) -> dict[str, Any]:
        limits = [rule.limit(t) for t in self.canonical_s.values()]
        return {
            "factor": rule.factor,
            "min_s": rule.min_s,
            "measured": self.measured,
            "from_cache": len(self.canonical_s) + len(self.kept_fixed) - self.measured,
            "limit_s": {"min": min(limits), "median": statistics.median(limits), "max": max(limits)} if limits else {},
            "canonical_s_max": round(max(self.canonical_s.values()), 4) if self.canonical_s else None,
            "kept_fixed": self.kept_fixed,
        }


def calibrate(
    verifier: Verifier,
    problems: Mapping[str, Problem],
    rule: LimitRule,
    *,
    workers: int,
    cache: EvidenceStore | None,
    progress: bool = False,
) -> Calibration:
    """Measure (or find in `cache`) each problem's canonical time and give each problem the
    rule's limit. `problems`: the ones the samples attempt."""
    measurable = [p for p in problems.values() if p.canonical is not None]
    jobs = [
        (Candidate.from_text(p.canonical or ""), p.with_call_limit(MEASURE_CALL_S, RUN_SLACK_S).suite)
        for p in measurable
    ]
    evidence, measured = harness.verify_jobs(verifier, jobs, workers=workers, progress=progress, store=cache)
    canonical = {p.task_id: charged_s(ev) for p, ev in zip(measurable, evidence, strict=True) if ev.ok}
    calibrated = {
        task: p.with_call_limit(rule.limit(canonical[task]), RUN_SLACK_S) if task in canonical else p
        for task, p in problems.items()
    }
    kept = sorted(task for task in problems if task not in canonical)
    return Calibration(problems=calibrated, canonical_s=canonical, measured=measured, kept_fixed=kept)
