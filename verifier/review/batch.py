"""A batch of SWE-bench instances: each prediction reviewed as base_commit + test_patch + model_patch.

Per instance a folder `OUT/<model folder>/<instance_id>/` (`instances.model_folder`: one to one)
with `patch.diff` (the model's patch), `test_patch.diff`, `test_output.txt` (each run's console
tail) and `report.json` (`InstanceReport`); per model one `summary.json` (`BatchSummary`), and
SWE-bench's own report files under `OUT/swebench/` (`swebench_report`).

Resume (`earlier_report`): a saved `report.json` counts only when it is bound to this instance
record, this prediction's patch, this model and this verifier's version (`Binding`), and, for a
verdict, its evidence agrees: `review_id` recomputed from the evidence, the patch and test patch
digests recomputed from the prediction and the instance, the base commit resolved again in the
repository, the spec's tests those of the instance. Anything else (also an infrastructure error,
which is not final) is reviewed again and its folder's files replaced; `force` redoes all.

Instances run `max_workers` at a time. The first instance of each repository runs before the
others of that repository start: it finds or builds the repository's environment image and
caches the base tree's own run, so the rest reuse both instead of building them side by side.

An instance that ends `overloaded` (no machine-wide sandbox slot came free in time: the host's
doing, never the prediction's) is reviewed again after a pause, as bench samples are
(`verifier.batch.Backoff`: bounded, the pause doubling); one that stays overloaded is counted
apart (`BatchSummary.overloaded`, never in `errors` nor as not resolved), is not final (the next
run reviews it again) and makes the command exit 3.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
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

from verifier._distribution import __version__
from verifier.batch import Backoff
from verifier.errors import HostOverloaded, InvalidInput, SandboxUnavailable
from verifier.hashing import canonical_json, sha256_bytes
from verifier.limits import REVIEW_LIMITS, Limits
from verifier.review import swebench_report
from verifier.review.gitread import GitRepo
from verifier.review.instances import Instance, Prediction
from verifier.review.review_evidence import ReviewEvidence, Text, identity, review_id
from verifier.review.service import ReviewRequest, review
from verifier.sandbox.admission import Admission
from verifier.sandbox.backend import SandboxBackend

#: the largest report.json read back (a review of 100,000 tests is about 60 MB).
MAX_REPORT_BYTES = 256 << 20
#: the files of an instance's folder, replaced whenever the instance is reviewed again.
FILES = ("report.json", "patch.diff", "test_patch.diff", "test_output.txt")


class InstanceStatus(StrEnum):
    RESOLVED = "resolved"
    NOT_RESOLVED = "not_resolved"
    ERROR = "error"  # no review: bad input (the patch does not apply, ...) or no result from the sandbox
    OVERLOADED = "overloaded"  # no review: the machine was too busy (no sandbox slot in time), after retries


class Binding(BaseModel):
    """What a report was made from: a saved report counts only for the same four."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_sha256: str = Field(description="sha256 of the instance record's fields the review uses.")
    patch_sha256: str | None = Field(description="sha256 of the model_patch's UTF-8 bytes (None: null).")
    model: str
    verifier_version: str


def instance_digest(inst: Instance) -> str:
    """The instance record as the review uses it (`repo` as the file gave it: not the clone's host path)."""
    return sha256_bytes(
        canonical_json({
            "instance_id": inst.instance_id, "repo": inst.repo_given or inst.repo, "base_commit": inst.base_commit,
            "test_patch": inst.test_patch, "FAIL_TO_PASS": inst.fail_to_pass, "PASS_TO_PASS": inst.pass_to_pass,
        })
    )  # fmt: skip


def binding(inst: Instance, pred: Prediction) -> Binding:
    patch = None if pred.model_patch is None else sha256_bytes(pred.model_patch.encode("utf-8", "surrogatepass"))
    return Binding(
        instance_sha256=instance_digest(inst), patch_sha256=patch, model=pred.model_name_or_path,
        verifier_version=__version__,
    )  # fmt: skip


class InstanceReport(BaseModel):
    """One instance of one model: its status, why, and the review's evidence when there is one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str
    model: str
    binding: Binding | None = Field(None, description="What it was made from; a report without one is never reused.")
    status: InstanceStatus
    resolved: bool
    reason: Text = Field(description="Trusted words: the review's verdict, or why there is no review.")
    fault: Literal["input", "infrastructure", "host"] | None = Field(
        None,
        description="For an error: the instance's input (final), or our infrastructure (retried); for overloaded: "
        "the host (retried).",
    )
    started_at: str
    duration_s: float
    attempts: int = Field(1, ge=1, description="Reviews it took (more than 1: retried after an overloaded one).")
    evidence: ReviewEvidence | None = None

    @property
    def final(self) -> bool:
        return self.fault not in ("infrastructure", "host")


class InstanceLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    status: InstanceStatus
    reason: Text
    review_id: str | None = None
    from_earlier_run: bool = Field(False, description="The verdict is a saved report's (bound, see docs/review.md).")


class BatchSummary(BaseModel):
    """One model's batch: the resolved count and rate, and every instance's status."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    total: int = Field(description="Instances with a prediction by this model.")
    resolved: int
    resolved_rate: float = Field(description="resolved / total (0 when there are none).")
    not_resolved: int
    errors: int
    overloaded: int = Field(
        0, description="Instances the machine stayed too busy to review (after retries): no verdict, not errors."
    )
    from_earlier_runs: int = Field(0, description="Verdicts taken from saved reports of earlier runs.")
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
    #: SWE-bench's run id: its files go to `out_dir/swebench/` (`swebench_report`).
    run_id: str = "verifier"
    #: Keep the clone's URI and the host name in the evidence (off: shared files carry neither).
    host_details: bool = False
    #: An overloaded instance's retries and first pause (`verifier.batch.Backoff`; None: its defaults).
    overloaded_retries: int | None = None
    backoff_s: float | None = None
    #: Where the sandbox jobs run (`verifier review batch --ray`: a `RayBackend`); None: this machine.
    backend: SandboxBackend | None = None
    #: On this machine: the machine-wide slots every sandbox job of the batch waits for (one
    #: object, so that a progress line can say how many wait and how long: `verifier.batch.SlotColumn`).
    admission: Admission | None = None


#: Called once per instance as it finishes: (report, reused from an earlier run, finished so far, total).
OnDone = Callable[[InstanceReport, bool, int, int], None]
#: Called for a saved report that is not used: (prediction, why).
OnStale = Callable[[Prediction, str], None]


def folder(out_dir: Path, pred: Prediction) -> Path:
    return out_dir / pred.model_folder / pred.instance_id


def _read_report(path: Path) -> InstanceReport | str:
    """The report in `path`, or why not: a regular file (never through a symlink), bounded in bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return "no report"
    except OSError as exc:
        return f"report.json cannot be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "report.json is not a regular file"
        if info.st_size > MAX_REPORT_BYTES:
            return f"report.json is over {MAX_REPORT_BYTES} bytes"
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        return f"report.json cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    if len(data) > MAX_REPORT_BYTES:
        return f"report.json is over {MAX_REPORT_BYTES} bytes"
    try:
        return InstanceReport.model_validate_json(data)
    except ValidationError:
        return "report.json is not an InstanceReport"


def earlier_report(path: Path, inst: Instance, pred: Prediction) -> tuple[InstanceReport | None, str]:
    """(a saved report that counts for this prediction, "") or (None, why it does not count)."""
    found = _read_report(path)
    if isinstance(found, str):
        return None, found
    why = _unbound(found, inst, pred)
    return (None, why) if why else (found, "")


def _unbound(rep: InstanceReport, inst: Instance, pred: Prediction) -> str:
    """Why a saved report does not count for this prediction ("" when it does)."""
    if not rep.final:
        return "an infrastructure error or an overloaded machine (retried)"
    if (rep.instance_id, rep.model) != (pred.instance_id, pred.model_name_or_path):
        return "it is the report of another instance or model"
    want = binding(inst, pred)
    if rep.binding is None:
        return "it is bound to nothing"
    for field in ("verifier_version", "instance_sha256", "patch_sha256"):
        if getattr(rep.binding, field) != getattr(want, field):
            return {"verifier_version": "it was made by another verifier version",
                    "instance_sha256": "it is bound to another instance record",
                    "patch_sha256": "it is bound to another patch"}[field]  # fmt: skip
    if rep.binding != want:
        return "it is bound to another model"
    if rep.resolved != (rep.status == InstanceStatus.RESOLVED):
        return "its resolved flag and status disagree"
    if rep.status == InstanceStatus.OVERLOADED:
        return "an overloaded machine (retried)"
    if rep.status == InstanceStatus.ERROR:
        if rep.evidence is not None or rep.fault != "input":
            return "an error with evidence or without an input fault"
        return ""
    if rep.evidence is None or rep.fault is not None:
        return "a verdict without evidence"
    return _evidence_disagrees(rep, rep.evidence, inst, pred)


def _evidence_disagrees(rep: InstanceReport, ev: ReviewEvidence, inst: Instance, pred: Prediction) -> str:
    """Digests recomputed from what the evidence judged, compared with it ("" when all agree)."""
    if ev.verifier_version != __version__:
        return "its evidence was made by another verifier version"
    if review_id(identity(ev.model_dump(mode="json"))) != ev.review_id:
        return "its evidence does not match its review_id"
    if ev.ok != (rep.status == InstanceStatus.RESOLVED) or ev.reason != rep.reason:
        return "its verdict is not its evidence's"
    if ev.patch_sha256 != binding(inst, pred).patch_sha256:
        return "its evidence judged another patch"
    if ev.test_patch_sha256 != sha256_bytes(inst.test_patch.encode("utf-8", "surrogatepass")):
        return "its evidence judged another test patch"
    if ev.tests_mode != "head" or ev.resolution is None:
        return "its evidence is not an instance review"
    listed = [(t.test_id, t.expected) for t in ev.resolution.tests]
    want = [(t, "fail_to_pass") for t in inst.fail_to_pass] + [(t, "pass_to_pass") for t in inst.pass_to_pass]
    if listed != want:
        return "its evidence judged other FAIL_TO_PASS / PASS_TO_PASS lists"
    try:
        commit, tree = GitRepo(Path(inst.repo)).resolve(inst.base_commit)
    except InvalidInput as exc:
        return f"the base commit cannot be resolved again ({exc})"
    if (ev.base.ref, ev.base.commit, ev.base.tree) != (inst.base_commit, commit, tree):
        return "its evidence judged another base commit"
    return ""


def _fresh_dir(path: Path) -> None:
    """`path` as a real folder of ours: a symlink or file in its place is removed first."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)


def _remove(path: Path) -> None:
    """Whatever is at `path` (a file, a symlink, which is not followed, or a folder)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()


def _public(ev: ReviewEvidence, host_details: bool) -> ReviewEvidence:
    """The evidence as shared files carry it: without the clone's URI and the host name (neither is
    part of review_id), unless `host_details`."""
    if host_details:
        return ev
    return ev.model_copy(update={"repository_uri": None, "hostname": ""})


def _public_reason(reason: str, inst: Instance, out_dir: Path, host_details: bool) -> str:
    """A reason without the host's paths of the clone and the batch folder (unless `host_details`)."""
    if host_details:
        return reason
    for path, name in ((str(out_dir.resolve()), "<out-dir>"), (inst.repo, inst.repo_given or "<repo>")):
        if Path(path).is_absolute() and path != "/":  # a relative path would also match inside words
            reason = reason.replace(path, name)
    return reason


def review_instance(
    inst: Instance, pred: Prediction, where: Path, limits: Limits, image: str | None,
    *, out_dir: Path | None = None, host_details: bool = False, backend: SandboxBackend | None = None,
    admission: Admission | None = None,
) -> InstanceReport:  # fmt: skip
    """Review one prediction; every outcome (also bad input) is a report, never an exception.
    The folder's files of an earlier review are replaced (none survives from it)."""
    started, t0 = datetime.now(UTC).isoformat(timespec="seconds"), time.monotonic()
    _fresh_dir(where)
    for name in FILES:
        _remove(where / name)
    patch, test_patch = where / "patch.diff", where / "test_patch.diff"
    _write_bytes(patch, (pred.model_patch or "").encode("utf-8", "surrogatepass"))
    _write_bytes(test_patch, inst.test_patch.encode("utf-8", "surrogatepass"))
    shared = out_dir if out_dir is not None else where.parent.parent

    def report(status: InstanceStatus, reason: str, fault: Literal["input", "infrastructure", "host"] | None = None,
               ev: ReviewEvidence | None = None) -> InstanceReport:  # fmt: skip
        return InstanceReport(
            instance_id=inst.instance_id, model=pred.model_name_or_path, binding=binding(inst, pred), status=status,
            resolved=status == InstanceStatus.RESOLVED, reason=_public_reason(reason, inst, shared, host_details),
            fault=fault, started_at=started, duration_s=time.monotonic() - t0,
            evidence=None if ev is None else _public(ev, host_details),
        )  # fmt: skip

    if not (pred.model_patch or "").strip():
        return report(InstanceStatus.ERROR, "the model_patch is empty", "input")
    request = ReviewRequest(
        repo=Path(inst.repo), base=inst.base_commit, head=None, patch=patch, test_patch=test_patch,
        tests="head", expect=inst, limits=limits, image=image,
    )  # fmt: skip
    try:
        if backend is not None:
            ev = review(request, backend=backend)
        else:
            ev = review(request) if admission is None else review(request, admission=admission)
    except InvalidInput as exc:
        return report(InstanceStatus.ERROR, f"bad input: {exc}", "input")
    except HostOverloaded as exc:
        return report(InstanceStatus.OVERLOADED, f"the machine was too busy to review it: {exc}", "host")
    except SandboxUnavailable as exc:
        return report(InstanceStatus.ERROR, f"the sandbox gave no result: {exc}", "infrastructure")
    except (OSError, ValueError) as exc:  # the host's disk, or evidence we could not build: retried next run
        return report(InstanceStatus.ERROR, f"internal error: {type(exc).__name__}: {exc}", "infrastructure")
    logs = "".join(f"===== {r.side} run (untrusted output) =====\n{r.log_tail_untrusted}\n" for r in ev.runs)
    _write(where / "test_output.txt", logs)
    status = InstanceStatus.RESOLVED if ev.ok else InstanceStatus.NOT_RESOLVED
    return report(status, ev.reason, ev=ev)


def _write_bytes(path: Path, data: bytes) -> None:
    """Whole or not at all: an interrupted write never looks like a finished instance. What was
    at `path` is replaced, never written through (a symlink is replaced, not followed)."""
    tmp = path.with_name(path.name + ".tmp")
    _remove(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    tmp.replace(path)


def _write(path: Path, text: str) -> None:
    _write_bytes(path, text.encode("utf-8", "surrogatepass"))


def summarize(model: str, reports: list[InstanceReport], earlier: frozenset[str] = frozenset()) -> BatchSummary:
    """One model's summary; `earlier`: the instance ids whose verdict came from a saved report."""
    by_status = {s: [r for r in reports if r.status == s] for s in InstanceStatus}
    resolved = sorted(r.instance_id for r in by_status[InstanceStatus.RESOLVED])
    return BatchSummary(
        model=model,
        total=len(reports),
        resolved=len(resolved),
        resolved_rate=len(resolved) / len(reports) if reports else 0.0,
        not_resolved=len(by_status[InstanceStatus.NOT_RESOLVED]),
        errors=len(by_status[InstanceStatus.ERROR]),
        overloaded=len(by_status[InstanceStatus.OVERLOADED]),
        from_earlier_runs=sum(r.instance_id in earlier for r in reports),
        resolved_ids=resolved,
        instances={
            r.instance_id: InstanceLine(
                status=r.status, reason=r.reason, review_id=r.evidence.review_id if r.evidence else None,
                from_earlier_run=r.instance_id in earlier,
            )
            for r in sorted(reports, key=lambda r: r.instance_id)
        },
    )  # fmt: skip


def run_batch(req: BatchRequest, on_done: OnDone | None = None, on_stale: OnStale | None = None) -> list[BatchSummary]:
    """Every prediction reviewed (or its bound earlier report reused); one summary per model,
    written too, and SWE-bench's report files."""
    reports: dict[tuple[str, str], InstanceReport] = {}
    earlier: set[tuple[str, str]] = set()
    todo: list[Prediction] = []
    total = len(req.predictions)
    for model_dir in dict.fromkeys(p.model_folder for p in req.predictions):
        _fresh_dir(req.out_dir / model_dir)
    for pred in req.predictions:
        key = (pred.model_name_or_path, pred.instance_id)
        where = folder(req.out_dir, pred)
        if where.is_symlink() or (where.exists() and not where.is_dir()):
            found, why = None, "its folder is not a folder of its own"
        elif req.force:
            found, why = None, ""
        else:
            found, why = earlier_report(where / "report.json", req.instances[pred.instance_id], pred)
        if found is None:
            if why and why != "no report" and on_stale is not None:
                on_stale(pred, why)
            todo.append(pred)
            continue
        reports[key] = found
        earlier.add(key)
        if on_done is not None:
            on_done(found, True, len(reports), total)
    finished = len(reports)

    def ran(rep: InstanceReport) -> None:
        nonlocal finished
        finished += 1
        if on_done is not None:
            on_done(rep, False, finished, total)

    for pred, rep in zip(todo, _run_all(req, todo, ran), strict=True):
        reports[(pred.model_name_or_path, pred.instance_id)] = rep
    summaries = []
    for model in dict.fromkeys(p.model_name_or_path for p in req.predictions):
        preds = [p for p in req.predictions if p.model_name_or_path == model]
        mine = [reports[(model, p.instance_id)] for p in preds]
        summary = summarize(model, mine, frozenset(i for m, i in earlier if m == model))
        _write(req.out_dir / preds[0].model_folder / "summary.json", summary.model_dump_json(indent=2))
        swebench_report.write(req.out_dir / swebench_report.FOLDER, req.run_id, req.instances, preds, mine, _write)
        summaries.append(summary)
    return summaries


def _run_all(req: BatchRequest, todo: list[Prediction], done: Callable[[InstanceReport], None]) -> list[InstanceReport]:
    """The instances to review, `max_workers` at a time, the first of each repository first."""
    gates: dict[str, threading.Event] = {}
    stop = threading.Event()

    def one(pred: Prediction, gate: threading.Event, first: bool) -> InstanceReport:
        inst = req.instances[pred.instance_id]
        try:
            if not first:
                gate.wait()
            where = folder(req.out_dir, pred)
            busy, attempts = Backoff(req.overloaded_retries, req.backoff_s, stop), 1

            def attempt() -> InstanceReport:
                return review_instance(
                    inst, pred, where, req.limits, req.image, out_dir=req.out_dir, host_details=req.host_details,
                    backend=req.backend, admission=req.admission,
                )  # fmt: skip

            rep = attempt()
            while rep.status == InstanceStatus.OVERLOADED and busy.wait():
                rep, attempts = attempt(), attempts + 1
            if attempts > 1:
                rep = rep.model_copy(update={"attempts": attempts})
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
    except BaseException:
        stop.set()  # Ctrl-C: no pause before a retry goes on, no retry starts
        raise
    finally:
        # Ctrl-C: no new instance starts; those running finish (each bounded by the limits).
        pool.shutdown(wait=True, cancel_futures=True)
