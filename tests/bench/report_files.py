"""A small bench run's files, written by hand for the report's tests: a results file (as
`bench humaneval` writes it, optionally with plus verdicts) and its evidence store, where one
candidate is hostile: its task id, its exception text and its output are markup and script."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from verifier import __version__
from verifier.evidence import Counts, Durations, Evidence, Failure, FailureKind, Status
from verifier.limits import Limits

#: Markup that must reach the page as text: it closes the cells around it, opens a script, an
#: image with a handler and a javascript: link.
HOSTILE = (
    '</pre></td></tr></table><script>alert("pwned")</script>'
    '<img src=x onerror="alert(1)"><a href="javascript:alert(2)">click</a><!--'
)
HOSTILE_TASK = 'HumanEval/<b onmouseover="alert(3)">99</b>'


def evidence(
    ident: str,
    status: Status,
    *,
    total_s: float,
    kind: FailureKind | None = None,
    detail: str = "",
    output: str = "",
    example: str | None = None,
) -> Evidence:
    ok = status is Status.PASSED
    failures = []
    if kind is not None:
        trusted = {"test_id": "test_check", "kind": kind, "message": "a trusted line", "falsifying_example": example}
        failures.append(Failure(**trusted, detail_untrusted=detail))
    return Evidence(
        evidence_id=ident,
        ok=ok,
        status=status,
        reason="all tests passed" if ok else "a test failed",
        candidate_sha256=hashlib.sha256(ident.encode()).hexdigest(),
        suite_sha256="0" * 64,
        image_id="sha256:x",
        counts=Counts(expected=1, passed=1) if ok else Counts(expected=1, failed=1),
        failures=failures,
        limits=Limits(),
        durations=Durations(
            total_s=total_s, queue_s=0.1, sandbox_s=0.2, runner_start_s=0.05, tests_s=total_s - 0.4, host_wait_s=0.05
        ),
        candidate_output_untrusted=output,
        verifier_version=__version__,
    )


def write_run(folder: Path, *, plus: bool = False) -> Path:
    """The files of a 6-sample run of 3 tasks (A: 2 of 3 pass, 1 of 3 with plus; B: the
        two identical samples time out; the
        hostile task: its one sample fails with markup for a message). Returns the results file;
        the evidence store is beside it (samples.jsonl_evidence.jsonl), with the plus run's evidence
    of A's second sample (which the plus tests catch)."""
    evs = {
        "p1": evidence("p1", Status.PASSED, total_s=1.0),
        "p2": evidence("p2", Status.PASSED, total_s=2.0),
        "f1": evidence("f1", Status.FAILED, total_s=1.0, kind=FailureKind.ASSERTION, detail="E   assert 1 == 2"),
        "t1": evidence("t1", Status.TIMEOUT, total_s=4.0, kind=FailureKind.TIMEOUT),
        "h1": evidence("h1", Status.FAILED, total_s=1.0, kind=FailureKind.EXCEPTION, detail=HOSTILE, output=HOSTILE),
        # The plus run of A's second sample: its base tests passed, a stronger test did not.
        "x2": evidence("x2", Status.FAILED, total_s=1.0, kind=FailureKind.ASSERTION, detail=HOSTILE, example="f(x=-1)"),
    }
    rows: list[dict[str, Any]] = [
        {"task_id": "A", "completion": "x", "passed": True, "evidence_id": "p1", "status": "passed", "plus": True},
        {"task_id": "A", "completion": "y", "passed": True, "evidence_id": "p2", "status": "passed", "plus": False},
        {"task_id": "A", "completion": "z", "passed": False, "evidence_id": "f1", "status": "failed", "plus": False},
        {"task_id": "B", "completion": "w", "passed": False, "evidence_id": "t1", "status": "timeout", "plus": False},
        {"task_id": "B", "completion": "w", "passed": False, "evidence_id": "t1", "status": "timeout", "plus": False},
        {
            "task_id": HOSTILE_TASK,
            "completion": HOSTILE,
            "passed": False,
            "evidence_id": "h1",
            "status": "failed",
            "result": "failed: " + HOSTILE,
            "plus": False,
        },
    ]
    for row in rows:
        verdict = row.pop("plus")
        row.setdefault("result", "passed" if row["passed"] else "failed: ")
        if plus:
            row["plus_passed"] = verdict
            if row["evidence_id"] == "p2":
                row["plus_evidence_id"] = "x2"
    results = folder / "samples.jsonl_results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = folder / "samples.jsonl_evidence.jsonl"
    store.write_text("".join(ev.to_json(indent=None) + "\n" for ev in evs.values()) + '{"torn": ')
    return results
