"""Pure: what a sandbox run means. `judge(raw, nonce, output_bytes)` (or `judge_result(raw,
result)` with the result `read_result` found) turns the raw facts of one run (exit, output,
kills) and the trusted runner's result into a status, a trusted reason, counts and failures.
No I/O, no clock: table tests cover every branch (tests/test_verdict.py).

Only a run whose result carries this job's nonce, whose every collected test passed
(`evidence.is_proven`), and which was not killed, is `passed`. Otherwise the first rule that
matches below decides, candidate faults before anything else: a wrong answer is wrong however
busy the host was, and only a run with no fault of the candidate's is called `overloaded` or
`infra_error`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

from verifier.evidence import (
    CaseOutcome,
    CompileInfo,
    Counts,
    Failure,
    FailureKind,
    FetchedFile,
    LineDifference,
    Status,
    is_proven,
)
from verifier.runner.protocol import (
    RESULT_OVERHEAD_BYTES,
    CaseRecord,
    CompileRecord,
    FailureRecord,
    FetchedRecord,
    JobResult,
    ProtocolError,
    parse_result,
    split_result_line,
)
from verifier.sandbox.backend import RawRun

CANDIDATE_FAILURES = {
    FailureKind.ASSERTION,
    FailureKind.EXCEPTION,
    FailureKind.CANDIDATE_DIED,
    FailureKind.NOT_PLAIN_DATA,
    FailureKind.SKIPPED,
    FailureKind.WRONG_ANSWER,
}
#: A program case's outcome (runner vocabulary: protocol.CASE_OUTCOMES) as a status.
CASE_STATUS = {
    "passed": Status.PASSED,
    "wrong_answer": Status.FAILED,
    "runtime_error": Status.ERROR,
    "timeout": Status.TIMEOUT,
    "oom": Status.OOM,
    "output_limit": Status.OUTPUT_LIMIT,
    "overloaded": Status.OVERLOADED,
    "infra": Status.INFRA_ERROR,
    "compile_error": Status.COMPILE_ERROR,
}


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str
    counts: Counts = field(default_factory=Counts)
    failures: list[Failure] = field(default_factory=list)
    output: str = ""
    output_bytes: int = 0
    tests_s: float = 0.0
    host_wait_s: float = 0.0
    cases: list[CaseOutcome] = field(default_factory=list)
    #: A program in a compiled language: its compile step.
    compile: CompileInfo | None = None


def _compile_info(record: CompileRecord | None) -> CompileInfo | None:
    if record is None:
        return None
    return CompileInfo(
        ok=record.ok,
        message=record.summary,
        time_s=max(0.0, record.time_s),
        wall_s=max(0.0, record.wall_s),
        memory_bytes=record.memory_bytes,
        exit_code=record.exit_code,
        signal=record.signal,
        artifact_bytes=record.artifact_bytes,
    )


def find_result(raw: RawRun, nonce: str, output_bytes: int) -> JobResult | None:
    """The trusted runner's result for this job, or None. Raises ProtocolError when malformed."""
    for line in reversed(raw.stdout.splitlines()):
        split = split_result_line(line)
        if split is not None and split[0] == nonce:
            return parse_result(split[2], max_bytes=output_bytes + RESULT_OVERHEAD_BYTES)
    return None


def _failure(record: FailureRecord) -> Failure:
    return Failure(
        test_id=record.test_id,
        kind=FailureKind(record.kind),
        message=record.summary,
        falsifying_example=record.falsifying_example,
        detail_untrusted=record.detail_untrusted,
    )


def _kept(b64: str | None) -> str | None:
    """A kept output (compare = "none") as text; the protocol checked that it is base64."""
    return None if b64 is None else base64.b64decode(b64).decode("utf-8", "replace")


def _fetched(record: FetchedRecord) -> FetchedFile:
    """A fetched file's record as evidence: its hash computed here, from the bytes that came back."""
    if record.b64 is None:
        return FetchedFile(path=record.path, error=record.error or "not fetched")
    data = base64.b64decode(record.b64)
    return FetchedFile(
        path=record.path, sha256=hashlib.sha256(data).hexdigest(), size=len(data), content_b64_untrusted=record.b64
    )


def _case(record: CaseRecord) -> CaseOutcome:
    difference = None
    if record.line is not None and record.output_line is not None and record.expected_line is not None:
        difference = LineDifference(
            line=max(1, record.line),
            output_line=max(1, record.output_line),
            expected=record.expected_line,
            got_untrusted=record.got_line_untrusted,
        )
    return CaseOutcome(
        name=record.name,
        status=CASE_STATUS[record.outcome],
        message=record.summary,
        ran=record.ran,
        time_s=max(0.0, record.time_s),
        wall_s=max(0.0, record.wall_s),
        cpu_s=max(0.0, record.cpu_s),
        memory_bytes=record.memory_bytes,
        exit_code=record.exit_code,
        signal=record.signal,
        stdout_untrusted=_kept(record.stdout_b64),
        stderr_untrusted=_kept(record.stderr_b64),
        difference=difference,
        files=[_fetched(f) for f in record.files],
    )


def _no_result(raw: RawRun, why: str) -> Verdict:
    """A run that ended without a (readable) result."""
    detail = raw.stderr.decode("utf-8", "replace")[-1500:]

    def closed(status: Status, kind: FailureKind, reason: str) -> Verdict:
        return Verdict(
            status, reason, failures=[Failure(test_id="<run>", kind=kind, message=reason, detail_untrusted=detail)]
        )

    if raw.oom_killed:
        return closed(Status.OOM, FailureKind.OOM, "the sandbox ran out of memory before the tests reported")
    if raw.output_limited:
        return closed(
            Status.OUTPUT_LIMIT, FailureKind.OUTPUT_LIMIT, "the run wrote more output than allowed and was stopped"
        )
    if raw.timed_out:
        if raw.host_starved:
            return closed(
                Status.OVERLOADED,
                FailureKind.OVERLOADED,
                "the host was too busy to give the sandbox its CPU, so the run could not finish in time",
            )
        return closed(Status.TIMEOUT, FailureKind.TIMEOUT, "the run exceeded its time limit and was killed")
    return closed(Status.INFRA_ERROR, FailureKind.INFRA, why)


def read_result(raw: RawRun, nonce: str, output_bytes: int) -> JobResult | ProtocolError | None:
    """`find_result`, with a malformed result returned (for `judge_result`) instead of raised."""
    try:
        return find_result(raw, nonce, output_bytes)
    except ProtocolError as exc:
        return exc


def judge(raw: RawRun, nonce: str, output_bytes: int) -> Verdict:
    """The verdict on one run of the launcher for the job with `nonce`."""
    return judge_result(raw, read_result(raw, nonce, output_bytes))


def judge_result(raw: RawRun, result: JobResult | ProtocolError | None) -> Verdict:
    """The verdict on one run, given what `read_result` found in it (read once per run)."""
    if isinstance(result, ProtocolError):
        return _no_result(raw, f"the runner's result could not be read ({result})")
    if result is None:
        return _no_result(raw, f"the trusted runner ended without a result (exit code {raw.exit_code})")

    counts = Counts(**result.counts.__dict__)
    failures = [_failure(f) for f in result.failures]
    kinds = {f.kind for f in failures}
    common = {
        "counts": counts,
        "failures": failures,
        "output": result.candidate_output,
        "output_bytes": result.candidate_output_bytes,
        "tests_s": result.tests_s,
        "host_wait_s": result.host_wait_s,
        "cases": [_case(c) for c in result.cases],
        "compile": _compile_info(result.compile),
    }
    what = "cases" if result.kind == "program" else "collected tests"
    if result.sandbox_error is not None and not kinds - {FailureKind.INFRA}:
        return Verdict(Status.INFRA_ERROR, f"the sandbox failed: {result.sandbox_error}", **common)  # type: ignore[arg-type]
    # result.oom: a process of the run was killed for memory, which makes the run oom (architecture.md)
    killed = raw.oom_killed or raw.timed_out or raw.output_limited or result.oom
    if is_proven(counts, failures) and result.failures_total == 0 and not killed:
        if result.exit_code == 0:
            return Verdict(Status.PASSED, f"all {counts.expected} {what} passed", **common)  # type: ignore[arg-type]
        return Verdict(
            Status.INFRA_ERROR,
            f"the test runner ended with exit code {result.exit_code} although every test passed",
            **common,  # type: ignore[arg-type]
        )
    status, reason = _first_fault(raw, result, counts, kinds)
    if not failures:  # every verdict other than a pass names at least one failure
        common["failures"] = [Failure(test_id="<run>", kind=_RUN_KIND[status], message=reason)]
    return Verdict(status, reason, **common)  # type: ignore[arg-type]


#: The kind of the one failure named for a run that failed without a failure of its own.
_RUN_KIND = {
    Status.OOM: FailureKind.OOM,
    Status.TIMEOUT: FailureKind.TIMEOUT,
    Status.OUTPUT_LIMIT: FailureKind.OUTPUT_LIMIT,
    Status.ERROR: FailureKind.COLLECTION_ERROR,
    Status.FAILED: FailureKind.EXCEPTION,
    Status.OVERLOADED: FailureKind.OVERLOADED,
    Status.INFRA_ERROR: FailureKind.INFRA,
    Status.COMPILE_ERROR: FailureKind.COMPILE_ERROR,
}


def _first_fault(raw: RawRun, result: JobResult, counts: Counts, kinds: set[FailureKind]) -> tuple[Status, str]:
    passed = f"{counts.passed} of {counts.expected} {'cases' if result.kind == 'program' else 'tests'} passed"
    if FailureKind.COMPILE_ERROR in kinds:  # no case ran: nothing else of the candidate's happened
        return Status.COMPILE_ERROR, "the program did not compile"
    if raw.oom_killed or result.oom or FailureKind.OOM in kinds:
        return Status.OOM, "the candidate ran out of memory"
    if FailureKind.TIMEOUT in kinds or (raw.timed_out and FailureKind.OVERLOADED not in kinds):
        return Status.TIMEOUT, "the candidate exceeded a time limit"
    if raw.output_limited or FailureKind.OUTPUT_LIMIT in kinds:
        return Status.OUTPUT_LIMIT, "the candidate wrote more output, or a bigger answer, than allowed"
    if result.import_failed or FailureKind.IMPORT_ERROR in kinds:
        return Status.ERROR, "the candidate could not be imported"
    if FailureKind.RUNTIME_ERROR in kinds:
        return Status.ERROR, f"the program ended with an error; {passed}"
    if kinds & CANDIDATE_FAILURES:
        if counts.skipped:
            passed += f"; {counts.skipped} skipped, which never counts as a pass"
        return Status.FAILED, passed
    if FailureKind.OVERLOADED in kinds:
        return Status.OVERLOADED, "the host was too busy to judge the candidate's time fairly; try again"
    if FailureKind.INFRA in kinds:
        return Status.INFRA_ERROR, "the sandbox failed during the run"
    if counts.expected == 0:
        return Status.ERROR, "no test was collected, so nothing is proven"
    if FailureKind.COLLECTION_ERROR in kinds or counts.errors:
        return Status.ERROR, f"{counts.errors} test(s) could not run"
    return Status.FAILED, passed
