"""Table tests of the pure verdict: raw run facts + the runner's result -> status and reason."""

from __future__ import annotations

from typing import Any

import pytest

from verifier.evidence import FailureKind, Status
from verifier.runner.protocol import FailureRecord, JobCounts, JobResult, format_result_line
from verifier.sandbox.fake import raw_run
from verifier.verdict import judge

NONCE = "n0nce"
ALL_PASS = JobCounts(expected=3, passed=3)


def line(nonce: str = NONCE, **fields: Any) -> bytes:
    base: dict[str, Any] = {"runner": "pytest", "exit_code": 0, "counts": ALL_PASS}
    base.update(fields)
    if "failures" in base:
        base.setdefault("failures_total", len(base["failures"]))
    return format_result_line(nonce, False, JobResult(**base))


def fail(kind: str) -> FailureRecord:
    return FailureRecord(test_id="test_a.py::t", kind=kind, summary=f"a {kind}")


SOME_FAIL = JobCounts(expected=3, passed=2, failed=1)

CASES: list[tuple[str, bytes, dict[str, Any], Status]] = [
    ("all passed", line(), {}, Status.PASSED),
    ("a result for another job", line(nonce="other"), {"exit_code": 0}, Status.INFRA_ERROR),
    ("no result, oom", b"", {"oom_killed": True, "exit_code": 137}, Status.OOM),
    ("no result, killed for time, idle host", b"", {"timed_out": True, "host_starved": False}, Status.TIMEOUT),
    ("no result, killed for time, busy host", b"", {"timed_out": True, "host_starved": True}, Status.OVERLOADED),
    ("no result, output flood", b"", {"output_limited": True}, Status.OUTPUT_LIMIT),
    ("no result, exit", b"", {"exit_code": 1}, Status.INFRA_ERROR),
    ("garbled result", b"VERIFIER-RESULT " + NONCE.encode() + b" 0 {nope\n", {}, Status.INFRA_ERROR),
    ("all passed but killed for time", line(), {"timed_out": True}, Status.TIMEOUT),
    ("all passed but oom", line(), {"oom_killed": True}, Status.OOM),
    ("all passed but a process of the run was killed for memory", line(oom=True), {}, Status.OOM),
    ("all passed but runner exit 3", line(exit_code=3), {}, Status.INFRA_ERROR),
    ("no tests", line(counts=JobCounts(), exit_code=5), {}, Status.ERROR),
    ("assertion", line(counts=SOME_FAIL, exit_code=1, failures=[fail("assertion")]), {}, Status.FAILED),
    (
        "skip",
        line(counts=JobCounts(expected=3, passed=2, skipped=1), exit_code=0, failures=[fail("skipped")]),
        {},
        Status.FAILED,
    ),
    ("timeout", line(counts=SOME_FAIL, exit_code=1, failures=[fail("timeout")]), {}, Status.TIMEOUT),
    ("oom in a test", line(counts=SOME_FAIL, exit_code=1, failures=[fail("oom")]), {}, Status.OOM),
    ("flood in a test", line(counts=SOME_FAIL, exit_code=1, failures=[fail("output_limit")]), {}, Status.OUTPUT_LIMIT),
    (
        "import",
        line(counts=JobCounts(expected=3, failed=3), exit_code=1, failures=[fail("import_error")], import_failed=True),
        {},
        Status.ERROR,
    ),
    (
        "collection",
        line(counts=JobCounts(expected=0, errors=1), exit_code=2, failures=[fail("collection_error")]),
        {},
        Status.ERROR,
    ),
    ("overloaded only", line(counts=SOME_FAIL, exit_code=1, failures=[fail("overloaded")]), {}, Status.OVERLOADED),
    (
        "overloaded and a wrong answer",
        line(
            counts=JobCounts(expected=3, passed=1, failed=2),
            exit_code=1,
            failures=[fail("overloaded"), fail("assertion")],
        ),
        {},
        Status.FAILED,
    ),
    (
        "overloaded and a real timeout",
        line(
            counts=JobCounts(expected=3, passed=1, failed=2),
            exit_code=1,
            failures=[fail("overloaded"), fail("timeout")],
        ),
        {},
        Status.TIMEOUT,
    ),
    ("infra only", line(counts=SOME_FAIL, exit_code=1, failures=[fail("infra")]), {}, Status.INFRA_ERROR),
    (
        "infra and a wrong answer",
        line(
            counts=JobCounts(expected=3, passed=1, failed=2), exit_code=1, failures=[fail("infra"), fail("assertion")]
        ),
        {},
        Status.FAILED,
    ),
    (
        "sandbox error",
        line(counts=JobCounts(), exit_code=-1, failures=[fail("infra")], sandbox_error="the zygote died"),
        {},
        Status.INFRA_ERROR,
    ),
    ("trusted child oom", line(counts=JobCounts(), exit_code=-1, failures=[fail("oom")], oom=True), {}, Status.OOM),
    ("failures beyond the list", line(failures_total=1), {}, Status.FAILED),
]


@pytest.mark.parametrize(("name", "stdout", "facts", "status"), CASES, ids=[c[0] for c in CASES])
def test_judge(name: str, stdout: bytes, facts: dict[str, Any], status: Status) -> None:
    verdict = judge(raw_run(stdout=b"noise\n" + stdout, **facts), NONCE, 1024)
    assert verdict.status is status, verdict.reason
    assert "\n" not in verdict.reason
    if status is not Status.PASSED:
        assert verdict.failures or verdict.counts.expected, "a non-pass names a failure or its counts"


def test_failures_keep_the_runners_trusted_summary_and_kind() -> None:
    record = FailureRecord(
        test_id="t",
        kind="exception",
        summary="the candidate raised an exception (seen by the test as TypeError)",
        falsifying_example="test_f(items=[[]])",
        detail_untrusted="E  EvilError: status: passed",
    )
    verdict = judge(raw_run(stdout=line(counts=SOME_FAIL, exit_code=1, failures=[record])), NONCE, 1024)
    (failure,) = verdict.failures
    assert failure.kind is FailureKind.EXCEPTION
    assert failure.message == record.summary and failure.falsifying_example == "test_f(items=[[]])"
    assert "EvilError" in failure.detail_untrusted and "EvilError" not in failure.message
