"""A batch of SWE-bench instances: each prediction reviewed as base_commit + test_patch + model_patch.

Per instance a folder `OUT/<model>/<instance_id>/` with `patch.diff` (the model's patch),
`test_patch.diff`, `test_output.txt` (each run's console tail) and `report.json`
(`InstanceReport`); per model one `summary.json` (`BatchSummary`). An instance whose
`report.json` holds a final status is not reviewed again (`force` to redo); an infrastructure
error (the sandbox gave no result) is not final and is retried by the next run.

Instances run `max_workers` at a time. The first instance of each repository runs before the
others of that repository start: it finds or builds the repository's environment image and
caches the base tree's own run, so the rest reuse both instead of building them side by side.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verifier.errors import InvalidInput, SandboxUnavailable
from verifier.limits import Limits
from verifier.review.instances import Instance, Prediction
from verifier.review.review_evidence import ReviewEvidence, Text
from verifier.review.service import REVIEW_LIMITS, ReviewRequest, review


class InstanceStatus(StrEnum):
    RESOLVED = "resolved"
    NOT_RESOLVED = "not_resolved"
    ERROR = "error"  # no review: bad input (the patch does not apply, ...) or no result from the sandbox


class InstanceReport(BaseModel):
    """One instance of one model: its status, why, and the review's evidence when there is one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str
    model: str
    status: InstanceStatus
    resolved: bool
    reason: Text = Field(description="Trusted words: the review's verdict, or why there is no review.")
    fault: Literal["input", "infrastructure"] | None = Field(
        None, description="For an error: the instance's input (final), or our infrastructure (retried)."
    )
    started_at: str
    duration_s: float
    evidence: ReviewEvidence | None = None

    @property
    def final(self) -> bool:
        return self.fault != "infrastructure"


class InstanceLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    status: InstanceStatus
    reason: Text
    review_id: str | None = None


class BatchSummary(BaseModel):
    """One model's batch: the resolved count and rate, and every instance's status."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    total: int = Field(description="Instances with a prediction by this model.")
    resolved: int
    resolved_rate: float = Field(description="resolved / total (0 when there are none).")
    not_resolved: int
    errors: int
    resolved_ids: list[str]
    instances: dict[str, InstanceLine]


@dataclass(frozen=True)
class BatchRequest:
    instances: dict[str, Instance]
    predictions: list[Prediction]
    out_dir: Path
    max_workers: int = 2
    force: bool = False
    limits: Limits = REVIEW_LIMITS
    image: str | None = None


#: Called once per instance as it finishes: (report, reused from an earlier run, finished so far, total).
OnDone = Callable[[InstanceReport, bool, int, int], None]


def folder(out_dir: Path, pred: Prediction) -> Path:
    return out_dir / pred.model_folder / pred.instance_id


def earlier_report(path: Path) -> InstanceReport | None:
    """A final report from an earlier run, or None (missing, unreadable, or not final)."""
    try:
        report = InstanceReport.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    return report if report.final else None


def review_instance(inst: Instance, pred: Prediction, where: Path, limits: Limits, image: str | None) -> InstanceReport:
    """Review one prediction; every outcome (also bad input) is a report, never an exception."""
    started, t0 = datetime.now(UTC).isoformat(timespec="seconds"), time.monotonic()
    where.mkdir(parents=True, exist_ok=True)
    patch, test_patch = where / "patch.diff", where / "test_patch.diff"
    patch.write_text(pred.model_patch or "", encoding="utf-8")
    test_patch.write_text(inst.test_patch, encoding="utf-8")

    def report(status: InstanceStatus, reason: str, fault: Literal["input", "infrastructure"] | None = None,
               ev: ReviewEvidence | None = None) -> InstanceReport:  # fmt: skip
        return InstanceReport(
            instance_id=inst.instance_id, model=pred.model_name_or_path, status=status,
            resolved=status == InstanceStatus.RESOLVED, reason=reason, fault=fault, started_at=started,
            duration_s=time.monotonic() - t0, evidence=ev,
        )  # fmt: skip

    if not (pred.model_patch or "").strip():
        return report(InstanceStatus.ERROR, "the model_patch is empty", "input")
    request = ReviewRequest(
        repo=Path(inst.repo), base=inst.base_commit, head=None, patch=patch, test_patch=test_patch,
        tests="head", expect=inst, limits=limits, image=image,
    )  # fmt: skip
    try:
        ev = review(request)
    except InvalidInput as exc:
        return report(InstanceStatus.ERROR, f"bad input: {exc}", "input")
    except SandboxUnavailable as exc:
        return report(InstanceStatus.ERROR, f"the sandbox gave no result: {exc}", "infrastructure")
    except (OSError, ValueError) as exc:  # the host's disk, or evidence we could not build: retried next run
        return report(InstanceStatus.ERROR, f"internal error: {type(exc).__name__}: {exc}", "infrastructure")
    logs = "".join(f"===== {r.side} run (untrusted output) =====\n{r.log_tail_untrusted}\n" for r in ev.runs)
    (where / "test_output.txt").write_text(logs, encoding="utf-8")
    status = InstanceStatus.RESOLVED if ev.ok else InstanceStatus.NOT_RESOLVED
    return report(status, ev.reason, ev=ev)


def _write(path: Path, text: str) -> None:
    """Whole or not at all: an interrupted write never looks like a finished instance."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def summarize(model: str, reports: list[InstanceReport]) -> BatchSummary:
    by_status = {s: [r for r in reports if r.status == s] for s in InstanceStatus}
    resolved = sorted(r.instance_id for r in by_status[InstanceStatus.RESOLVED])
    return BatchSummary(
        model=model,
        total=len(reports),
        resolved=len(resolved),
        resolved_rate=len(resolved) / len(reports) if reports else 0.0,
        not_resolved=len(by_status[InstanceStatus.NOT_RESOLVED]),
        errors=len(by_status[InstanceStatus.ERROR]),
        resolved_ids=resolved,
        instances={
            r.instance_id: InstanceLine(
                status=r.status, reason=r.reason, review_id=r.evidence.review_id if r.evidence else None
            )
            for r in sorted(reports, key=lambda r: r.instance_id)
        },
    )


def run_batch(req: BatchRequest, on_done: OnDone | None = None) -> list[BatchSummary]:
    """Every prediction reviewed (or its earlier report reused); one summary per model, written too."""
    reports: dict[tuple[str, str], InstanceReport] = {}
    todo: list[Prediction] = []
    total = len(req.predictions)
    for pred in req.predictions:
        found = None if req.force else earlier_report(folder(req.out_dir, pred) / "report.json")
        if found is None:
            todo.append(pred)
            continue
        reports[(pred.model_folder, pred.instance_id)] = found
        if on_done is not None:
            on_done(found, True, len(reports), total)
    finished = len(reports)

    def ran(rep: InstanceReport) -> None:
        nonlocal finished
        finished += 1
        if on_done is not None:
            on_done(rep, False, finished, total)

    for pred, rep in zip(todo, _run_all(req, todo, ran), strict=True):
        reports[(pred.model_folder, pred.instance_id)] = rep
    summaries = []
    for model in dict.fromkeys(p.model_folder for p in req.predictions):
        mine = [r for (m, _), r in reports.items() if m == model]
        summary = summarize(mine[0].model if mine else model, mine)
        _write(req.out_dir / model / "summary.json", summary.model_dump_json(indent=2))
        summaries.append(summary)
    return summaries


def _run_all(req: BatchRequest, todo: list[Prediction], done: Callable[[InstanceReport], None]) -> list[InstanceReport]:
    """The instances to review, `max_workers` at a time, the first of each repository first."""
    gates: dict[str, threading.Event] = {}

    def one(pred: Prediction, gate: threading.Event, first: bool) -> InstanceReport:
        inst = req.instances[pred.instance_id]
        try:
            if not first:
                gate.wait()
            where = folder(req.out_dir, pred)
            rep = review_instance(inst, pred, where, req.limits, req.image)
            _write(where / "report.json", json.dumps(rep.model_dump(mode="json"), indent=2))
            return rep
        finally:
            if first:
                gate.set()

    pool = ThreadPoolExecutor(max_workers=req.max_workers, thread_name_prefix="verifier-batch")
    try:
        futures: list[Future[InstanceReport]] = []
        for pred in todo:
            repo = req.instances[pred.instance_id].repo
            first = repo not in gates
            gate = gates.setdefault(repo, threading.Event())
            futures.append(pool.submit(one, pred, gate, first))
        for fut in as_completed(futures):
            done(fut.result())
        return [f.result() for f in futures]
    finally:
        # Ctrl-C: no new instance starts; those running finish (each bounded by the limits).
        pool.shutdown(wait=True, cancel_futures=True)
