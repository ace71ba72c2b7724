"""SWE-bench's own report files, written beside ours so its users' analysis scripts keep working.

The shapes are those of SWE-bench's harness (v4.1.0; checked against the source at
github.com/SWE-bench/SWE-bench): the per-instance `report.json` of
`swebench/harness/grading.py:get_eval_report` (with `include_tests_status`, as
`run_evaluation.py:run_instance` writes it) and the run summary of
`swebench/harness/reporting.py:make_run_report`, in the harness's layout under `OUT/swebench/`
(its working directory):

    OUT/swebench/logs/run_evaluation/<run_id>/<model folder>/<instance_id>/report.json
    OUT/swebench/<model folder>.<run_id>.json

As the harness does: an instance with an empty or null patch is not run (`empty_patch_ids`, no
report.json); one that could not be evaluated (for us: an `error`, e.g. a patch that does not
apply) has no report.json and is in `error_ids`. `resolved` and `tests_status` are our verdict: a
FAIL_TO_PASS / PASS_TO_PASS test is a `success` when it met our expectation (FAIL_TO_PASS also
failing or absent on the base; a flaky pass is no pass); FAIL_TO_FAIL and PASS_TO_FAIL are empty,
as the harness leaves them by default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from verifier.review.instances import Instance, Prediction
    from verifier.review.review_evidence import ReviewEvidence


class InstanceReport(Protocol):
    """What these files need of one instance's report (`verifier.review.batch.InstanceReport`)."""

    @property
    def instance_id(self) -> str: ...

    @property
    def resolved(self) -> bool: ...

    @property
    def evidence(self) -> ReviewEvidence | None: ...


#: the folder of SWE-bench's files inside a batch's --out-dir (a model folder can never be named so).
FOLDER = "swebench"
#: the harness's RUN_EVALUATION_LOG_DIR and LOG_REPORT (swebench/harness/constants).
LOG_DIR = Path("logs") / "run_evaluation"
LOG_REPORT = "report.json"
KINDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")


def instance_report(rep: InstanceReport) -> dict[str, Any] | None:
    """`get_eval_report`'s map for one instance, or None when the harness writes none (an error)."""
    ev = rep.evidence
    if ev is None or ev.resolution is None:
        return None
    status: dict[str, dict[str, list[str]]] = {k: {"success": [], "failure": []} for k in KINDS}
    for t in ev.resolution.tests:
        status[t.expected.upper()]["success" if t.met else "failure"].append(t.test_id)
    return {
        rep.instance_id: {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": rep.resolved,
            "tests_status": status,
        }
    }


def run_report(
    instances: dict[str, Instance], preds: list[Prediction], reports: Sequence[InstanceReport]
) -> dict[str, Any]:
    """`make_run_report`'s summary of one model's predictions (schema_version 2)."""
    by_id = {r.instance_id: r for r in reports}
    submitted = {p.instance_id for p in preds}
    empty = {p.instance_id for p in preds if p.model_patch in ("", None)}
    completed = {i for i in submitted - empty if instance_report(by_id[i]) is not None}
    resolved = {i for i in completed if by_id[i].resolved}
    return {
        "total_instances": len(instances),
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(completed - resolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(submitted - empty - completed),
        "completed_ids": sorted(completed),
        "incomplete_ids": sorted(set(instances) - submitted),
        "empty_patch_ids": sorted(empty),
        "submitted_ids": sorted(submitted),
        "resolved_ids": sorted(resolved),
        "unresolved_ids": sorted(completed - resolved),
        "error_ids": sorted(submitted - empty - completed),
        "schema_version": 2,
    }


def _real_dir(root: Path, rel: Path) -> Path:
    """`root / rel` made of real folders: a symlink or file on the way is replaced by a folder, so
    nothing is written through a link to a place outside the batch folder."""
    path = root
    for part in rel.parts:
        path = path / part
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        path.mkdir(exist_ok=True)
    return path


def write(
    root: Path,
    run_id: str,
    instances: dict[str, Instance],
    preds: list[Prediction],
    reports: Sequence[InstanceReport],
    put: Callable[[Path, str], None],
) -> None:
    """One model's files under `root` (`put` writes a file whole, replacing what was there). An
    instance without a report here has its stale report.json removed."""
    _real_dir(root.parent, Path(root.name))
    model_dir = Path(LOG_DIR, run_id, preds[0].model_folder)
    for pred, rep in zip(preds, reports, strict=True):
        found = instance_report(rep)
        where = _real_dir(root, model_dir / pred.instance_id)
        if found is None:
            if (where / LOG_REPORT).is_symlink() or (where / LOG_REPORT).is_file():
                (where / LOG_REPORT).unlink()
            continue
        put(where / LOG_REPORT, json.dumps(found, indent=4))
    put(root / f"{preds[0].model_folder}.{run_id}.json", json.dumps(run_report(instances, preds, reports), indent=4))
