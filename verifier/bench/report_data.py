"""What a bench report shows, read from the files a run leaves: the results file (one line per
sample, `bench humaneval`'s or `bench io`'s) and the evidence store beside it (one `Evidence`
per line, keyed by `evidence_id`), with the run's summary when there is one (`--json-out`).

Every number here is recomputed from those files, so a report can be made long after the run
(`verifier bench report`). The results file is read defensively: a line names its task by
`task_id` (HumanEval) or `problem_id` (`bench io`); `passed` is its verdict; a "plus" verdict
(stronger tests, `bench humaneval --plus`) is read from `plus_passed` or `plus.passed` when
present (base + plus passes when both do), with the plus run's evidence at `plus_evidence_id`,
and the plus columns show only when every line has one. Text that came from the samples
or the candidates (task ids, exception messages, output) is carried as it is: the page escapes
it (`verifier.bench.report`).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from verifier.bench.datasets import read_jsonl
from verifier.bench.passk import DEFAULT_KS, pass_at_k, pass_at_ks
from verifier.evidence import Evidence, Status, is_verdict

#: Failing samples listed in the page (one per distinct failing job, the first ones).
MAX_FAILURES_SHOWN = 100
#: Characters of a candidate's own text shown per failure.
MAX_DETAIL_CHARS = 600
#: The phases of a sandbox job, in the order they happen (`Durations`' fields), with their words.
PHASES = {
    "queue_s": "waiting for a sandbox",
    "sandbox_s": "container start/reset",
    "runner_start_s": "runner start",
    "tests_s": "tests (charged)",
    "host_wait_s": "waiting for a busy CPU",
    "other_s": "host side (hashing, reading the result)",
}


class ProblemRow(BaseModel):
    """One task: its samples, how many passed, pass@k (each k the task has samples for)."""

    task: str
    samples: int
    passed: int
    pass_at_k: dict[str, float]
    plus_passed: int | None = Field(None, description="Samples that passed the base and the plus tests.")
    plus_pass_at_k: dict[str, float] | None = None


class FailureRow(BaseModel):
    """One failing job, as the page lists it. `message` is trusted; `detail_untrusted` is the
    candidate's own text (escaped by the page)."""

    task: str
    status: str
    kind: str
    test: str
    message: str
    detail_untrusted: str
    samples: int = Field(description="Samples of the run that are this job (identical candidates).")
    example: str = Field("", description="The falsifying example Hypothesis found (trusted: written before the call).")


class Latency(BaseModel):
    """The distribution of the jobs' total time (seconds), over the jobs the store holds."""

    values: list[float] = Field(description="Every job's durations.total_s, sorted.")
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None


class ReportData(BaseModel):
    """Everything the report page and the PNG show (written beside them as report.json)."""

    title: str
    bench: str = Field(description="humaneval or io, from the results' keys.")
    ks: list[int]
    samples: int
    problems: list[ProblemRow]
    pass_at_k: dict[str, float]
    plus_pass_at_k: dict[str, float] | None = None
    plus_caught: list[FailureRow] | None = Field(
        None, description="Samples that passed the base tests and failed the plus tests (the first ones)."
    )
    plus_caught_count: int = 0
    not_reported: dict[str, str] = Field(default_factory=dict, description="Why a requested k has no pass@k.")
    statuses: dict[str, int]
    failure_kinds: dict[str, int] = Field(description="Failing samples by the kind of their first failure.")
    failures: list[FailureRow]
    failures_not_shown: int = 0
    latency: Latency
    time_s: dict[str, float] = Field(description="Summed over the jobs: seconds in each phase (PHASES).")
    jobs: int = Field(description="Distinct jobs whose evidence the store holds.")
    missing_evidence: int = Field(0, description="Samples whose evidence_id the store does not hold.")
    not_judged: int = Field(
        0,
        description="Samples the machine stayed too busy to judge (overloaded, after their retries): no verdict on "
        "the model, so pass@k and the problem table leave them out.",
    )
    unreadable_evidence_lines: int = 0
    run: dict[str, Any] = Field(default_factory=dict, description="The run's summary, when given (--json-out).")


def read_evidence(path: Path | None) -> tuple[dict[str, Evidence], int]:
    """The store's evidence by id (a verdict wins over an infra error of the same id, a later
    line over an earlier one) and how many lines were not evidence (a torn last line after a
    crash, or a foreign line: counted and shown, not fatal for a report)."""
    found: dict[str, Evidence] = {}
    bad = 0
    if path is None or not path.is_file():
        return found, bad
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                ev = Evidence.model_validate_json(line)
            except ValidationError:
                bad += 1
                continue
            held = found.get(ev.evidence_id)
            if held is None or is_verdict(ev.status) or not is_verdict(held.status):
                found[ev.evidence_id] = ev
    return found, bad


def task_of(row: dict[str, Any]) -> str:
    """A results line's task: `task_id` (HumanEval) or `problem_id` (`bench io`)."""
    for key in ("task_id", "problem_id"):
        if key in row:
            return str(row[key])
    raise ValueError("a results line needs task_id or problem_id")


def plus_of(row: dict[str, Any]) -> bool | None:
    """A line's base + plus verdict (its base tests and the stronger ones passed), or None when
    it has no plus verdict."""
    value = row.get("plus_passed")
    if value is None and isinstance(row.get("plus"), dict):
        value = row["plus"].get("passed")
    return bool(row["passed"] and value) if isinstance(value, bool) else None


def read_results(path: Path) -> list[dict[str, Any]]:
    """The results file's lines. Raises ValueError naming a line that is not a sample's result."""
    rows = []
    for number, row in read_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("passed"), bool):
            raise ValueError(f"{path}:{number}: not a results line (a JSON object with passed)")
        try:
            task_of(row)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no results")
    return rows


def judged(row: dict[str, Any]) -> bool:
    """Whether a results line holds a verdict on the model: every line but an `overloaded` one
    (the host's doing; an `infra_error` counts as failed, as in the run's own pass@k)."""
    return row.get("status") != Status.OVERLOADED.value


def plus_judged(row: dict[str, Any]) -> bool:
    """Whether a results line holds a base + plus verdict on the model: neither run of it stayed
    `overloaded` (out of base + plus's pass@k then, as in the run's own)."""
    return judged(row) and row.get("plus_status") != Status.OVERLOADED.value


def per_problem(rows: Sequence[dict[str, Any]], ks: Sequence[int]) -> list[ProblemRow]:
    """Each task's samples, passes and pass@k (for each k up to its sample count), in the
    order the tasks first appear."""
    base: dict[str, list[bool]] = {}
    plus: dict[str, list[bool | None]] = {}
    judged_plus: dict[str, list[bool]] = {}  # a line whose plus run stayed overloaded: left out
    for row in rows:
        base.setdefault(task_of(row), []).append(row["passed"])
        plus.setdefault(task_of(row), []).append(plus_of(row))
        judged_plus.setdefault(task_of(row), [])
        if plus_judged(row):
            judged_plus[task_of(row)].append(bool(plus_of(row)))
    out = []
    for task, verdicts in base.items():
        n, c = len(verdicts), sum(verdicts)
        has_plus = all(v is not None for v in plus[task])
        pn, pc = len(judged_plus[task]), sum(judged_plus[task])
        out.append(
            ProblemRow(
                task=task,
                samples=n,
                passed=c,
                pass_at_k={f"pass@{k}": pass_at_k(n, c, k) for k in ks if k <= n},
                plus_passed=pc if has_plus else None,
                plus_pass_at_k={f"pass@{k}": pass_at_k(pn, pc, k) for k in ks if k <= pn} if has_plus else None,
            )
        )
    return out


def latency(values: Iterable[float]) -> Latency:
    ordered = sorted(values)
    if not ordered:
        return Latency(values=[])

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return Latency(values=ordered, median=statistics.median(ordered), p90=at(0.9), p99=at(0.99), max=ordered[-1])


def time_spent(evidence: Iterable[Evidence]) -> dict[str, float]:
    """Seconds in each phase, summed over the jobs; `tests_s` is charged time (the wait for a
    busy CPU is its own phase) and `other_s` what the total has beyond the phases."""
    sums = dict.fromkeys(PHASES, 0.0)
    for ev in evidence:
        d = ev.durations
        sums["queue_s"] += d.queue_s
        sums["sandbox_s"] += d.sandbox_s
        sums["runner_start_s"] += d.runner_start_s
        sums["tests_s"] += max(0.0, d.tests_s - d.host_wait_s)
        sums["host_wait_s"] += d.host_wait_s
        sums["other_s"] += max(0.0, d.total_s - d.queue_s - d.sandbox_s - d.runner_start_s - d.tests_s)
    return {phase: round(seconds, 3) for phase, seconds in sums.items()}


def failures(rows: Sequence[dict[str, Any]], evidence: dict[str, Evidence]) -> tuple[list[FailureRow], Counter[str]]:
    """One row per distinct failing job (first seen first), and failing samples by the kind of
    their first failure (their status when the evidence is missing or names no failure)."""
    kinds: Counter[str] = Counter()
    shown: dict[str, FailureRow] = {}
    for row in rows:
        if row["passed"]:
            continue
        ident = str(row.get("evidence_id"))
        ev = evidence.get(ident)
        first = ev.failures[0] if ev is not None and ev.failures else None
        status = ev.status.value if ev is not None else str(row.get("status", "failed"))
        kind = first.kind.value if first is not None else status
        kinds[kind] += 1
        if ident in shown:
            shown[ident] = shown[ident].model_copy(update={"samples": shown[ident].samples + 1})
            continue
        shown[ident] = _failure_row(row, ev, status, kind)
    return list(shown.values()), kinds


def _failure_row(row: dict[str, Any], ev: Evidence | None, status: str, kind: str) -> FailureRow:
    """A failing sample's row: its first failure's test, trusted message and the candidate's
    own text (else the evidence's reason and output, else the results line's `result`)."""
    first = ev.failures[0] if ev is not None and ev.failures else None
    if first is not None:
        test, message, detail = first.test_id, first.message, first.detail_untrusted
    elif ev is not None:
        test, message, detail = "", ev.reason, ev.candidate_output_untrusted
    else:
        test, message, detail = "", "", ""
    detail = detail or str(row.get("result", ""))
    return FailureRow(
        task=task_of(row),
        status=status,
        kind=kind,
        test=test,
        message=message,
        detail_untrusted=detail[:MAX_DETAIL_CHARS],
        samples=1,
    )


def _plus_row(row: dict[str, Any], store: dict[str, Evidence]) -> FailureRow:
    """A sample the plus tests caught: its plus evidence's first failure and falsifying example."""
    ev = store.get(str(row.get("plus_evidence_id")))
    status = ev.status.value if ev is not None else str(row.get("plus_status", "failed"))
    first = ev.failures[0] if ev is not None and ev.failures else None
    out = _failure_row(row, ev, status, first.kind.value if first is not None else status)
    example = (first.falsifying_example if first is not None else None) or ""
    detail = out.detail_untrusted if ev is not None else ""  # not the base run's `result`
    return out.model_copy(update={"example": example, "detail_untrusted": detail})


def collect(
    results: Path,
    *,
    evidence: Path | None = None,
    summary: dict[str, Any] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    title: str | None = None,
) -> ReportData:
    """The report's data from a results file, its evidence store (default: beside it,
    `X_evidence.jsonl` for `X_results.jsonl`) and the run's summary. Raises ValueError or
    OSError naming the results file when it is not one."""
    rows = read_results(results)
    if evidence is None:
        evidence = default_evidence(results)
    store, bad = read_evidence(evidence)
    ids = {str(row.get("evidence_id")) for row in rows}
    jobs = [store[i] for i in sorted(ids) if i in store]
    verdicts = [r for r in rows if judged(r)]  # pass@k as the run computes it (harness.run)
    problems = per_problem(verdicts, ks)
    scores = pass_at_ks([task_of(r) for r in verdicts], [r["passed"] for r in verdicts], ks)
    has_plus = all(p.plus_passed is not None for p in problems)
    plus_rows = [r for r in verdicts if plus_judged(r)]
    plus_scores = (
        pass_at_ks([task_of(r) for r in plus_rows], [bool(plus_of(r)) for r in plus_rows], ks) if has_plus else None
    )
    caught = [_plus_row(r, store) for r in rows if r["passed"] and plus_of(r) is False] if has_plus else None
    statuses = Counter(str(r.get("status", "passed" if r["passed"] else "failed")) for r in rows)
    failing, kinds = failures(rows, store)
    return ReportData(
        title=title or results.name.removesuffix("_results.jsonl"),
        bench="humaneval" if "task_id" in rows[0] else "io",
        ks=list(ks),
        samples=len(rows),
        problems=problems,
        pass_at_k=scores.scores,
        plus_pass_at_k=None if plus_scores is None else plus_scores.scores,
        plus_caught=None if caught is None else caught[:MAX_FAILURES_SHOWN],
        plus_caught_count=0 if caught is None else len(caught),
        not_reported=scores.not_reported,
        statuses={s.value: statuses.get(s.value, 0) for s in Status} | dict(statuses),
        failure_kinds=dict(kinds.most_common()),
        failures=failing[:MAX_FAILURES_SHOWN],
        failures_not_shown=max(0, len(failing) - MAX_FAILURES_SHOWN),
        latency=latency(ev.durations.total_s for ev in jobs),
        time_s=time_spent(jobs),
        jobs=len(jobs),
        missing_evidence=sum(str(r.get("evidence_id")) not in store for r in rows),
        not_judged=len(rows) - len(verdicts),
        unreadable_evidence_lines=bad,
        run=summary or {},
    )


def default_evidence(results: Path) -> Path:
    """The evidence store a run keeps beside its results file (`verifier.bench.store`)."""
    stem = results.name.removesuffix("_results.jsonl")
    return results.with_name(f"{stem}_evidence.jsonl")
