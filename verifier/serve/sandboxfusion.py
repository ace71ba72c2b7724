"""SandboxFusion's `/run_code` on the program path: a request becomes a program suite of one case
(`kind = "program"`, `compare = "none"`: nothing compared, stdout and stderr come back), and the
evidence becomes SandboxFusion's answer, exactly the fields verl's reward code reads
(`verl/utils/reward_score/sandbox_fusion/utils.py`): `status` (Success / Failed / SandboxError),
`run_result.{status, execution_time, return_code, stdout, stderr}`, and `compile_result` (for
Python: the syntax check made before anything runs).

| evidence | HTTP | status | compile_result | run_result |
| --- | --- | --- | --- | --- |
| the program exited 0 | 200 | Success | Finished, 0 | Finished, 0, stdout, stderr |
| exited non-zero, or killed by a signal (-N) | 200 | Failed | Finished, 0 | Finished, its code |
| over its time limit | 200 | Failed | Finished, 0 | TimeLimitExceeded |
| over its memory or output limit | 200 | Failed | Finished, 0 | Finished, -9 (killed) |
| a syntax error, or code the verifier refuses | 200 | Failed | Finished, 1, the reason on stderr | none |
| our sandbox failed (infra_error) | 200 | SandboxError | none | none |
| the host too busy (overloaded) | 504 + Retry-After | SandboxError | none | none |

Overloaded answers 504, not 503: verl's client retries a 504 (Gateway Timeout), and only that.
"""

from __future__ import annotations

import json
import signal

from verifier.errors import InvalidInput
from verifier.evidence import CaseOutcome, Evidence, FailureKind, Status
from verifier.inputs import Candidate
from verifier.serve.api import CommandRunResult, RunCodeRequest, RunCodeResponse
from verifier.serve.body import Refusal
from verifier.serve.config import RunCodeConfig
from verifier.suite import Suite, suite_from_files

LANGUAGES = ("python", "python3")
#: The whole sandboxed run of a program may take its case's time limit plus this (start, reset).
RUN_SLACK_S = 10.0
#: The HTTP status of an overloaded answer (see the module's documentation).
OVERLOADED_STATUS = 504
KILLED = -int(signal.SIGKILL)


def _refuse(reason: str) -> Refusal:
    return Refusal(400, "invalid", reason)


def program(request: RunCodeRequest, config: RunCodeConfig) -> tuple[Candidate, Suite]:
    """The candidate and one-case program suite of a request, or Refusal (400) naming the field
    this server does not support."""
    if request.language not in LANGUAGES:
        raise _refuse(f"language {request.language[:40]!r} is not supported: this server runs Python programs only")
    for name in ("files", "fetch_files", "args"):
        if getattr(request, name):
            raise _refuse(f"{name} is not supported: send the program as one Python source in code")
    if request.run_timeout > config.max_run_timeout_s:
        raise _refuse(f"run_timeout {request.run_timeout:g} is over this server's {config.max_run_timeout_s:g} s")
    memory_mb = config.max_memory_mb if request.memory_limit_MB <= 0 else request.memory_limit_MB
    if not 16 <= memory_mb <= config.max_memory_mb:
        raise _refuse(f"memory_limit_MB {request.memory_limit_MB} is not within 16 and {config.max_memory_mb}")
    case = {"name": "run", "input": request.stdin or "", "output": ""}
    manifest = (
        'kind = "program"\nname = "run_code"\n\n[program]\ncases = "cases.jsonl"\ncompare = "none"\n'
        f"time_limit_s = {request.run_timeout!r}\nmemory_bytes = {memory_mb * 1024**2}\n\n"
        f"[limits]\ntimeout_s = {min(3600.0, request.run_timeout + RUN_SLACK_S)!r}\n"
    )
    files = {"suite.toml": manifest.encode(), "cases.jsonl": json.dumps(case).encode() + b"\n"}
    try:
        suite = suite_from_files(files, "run_code")
    except InvalidInput as exc:  # an input this server cannot take (e.g. a huge stdin)
        raise Refusal(422, "invalid", f"the request cannot be run: {exc}") from None
    return Candidate.from_text(request.code, label="<code>"), suite


def _run_result(case: CaseOutcome) -> CommandRunResult:
    code = case.exit_code if case.exit_code is not None else (-case.signal if case.signal is not None else None)
    if case.status is Status.TIMEOUT:
        status = "TimeLimitExceeded"
    else:
        status = "Finished"
        if case.status in (Status.OOM, Status.OUTPUT_LIMIT):
            code = KILLED
    return CommandRunResult(
        status=status,  # type: ignore[arg-type]
        execution_time=case.time_s,
        return_code=code,
        stdout=case.stdout_untrusted if case.stdout_untrusted is not None else "",
        stderr=case.stderr_untrusted if case.stderr_untrusted is not None else "",
    )


def _compiled(ok: bool, stderr: str = "") -> CommandRunResult:
    return CommandRunResult(status="Finished", execution_time=0.0, return_code=0 if ok else 1, stdout="", stderr=stderr)


def response(evidence: Evidence) -> tuple[int, RunCodeResponse]:
    """The HTTP status and SandboxFusion answer of a /run_code evidence (the table above)."""
    eid = evidence.evidence_id
    if evidence.status is Status.OVERLOADED:
        return OVERLOADED_STATUS, RunCodeResponse(status="SandboxError", message=evidence.reason, evidence_id=eid)
    if evidence.status is Status.INFRA_ERROR:
        return 200, RunCodeResponse(status="SandboxError", message=evidence.reason, evidence_id=eid)
    refused = evidence.status is Status.INVALID_INPUT or any(
        f.kind is FailureKind.SYNTAX_ERROR for f in evidence.failures
    )
    if refused or not evidence.cases:
        detail = "\n".join(f"{f.message}: {f.detail_untrusted}" for f in evidence.failures) or evidence.reason
        return 200, RunCodeResponse(
            status="Failed", message=evidence.reason, compile_result=_compiled(False, detail), evidence_id=eid
        )
    case = evidence.cases[0]
    run = _run_result(case)
    if case.status is Status.PASSED and case.stdout_untrusted is None:  # never: the runner keeps it
        return 200, RunCodeResponse(status="SandboxError", message="the program's output was not kept", evidence_id=eid)
    status = "Success" if evidence.ok else "Failed"
    message = "" if evidence.ok else case.message
    return 200, RunCodeResponse(
        status=status,  # type: ignore[arg-type]
        message=message,
        compile_result=_compiled(True),
        run_result=run,
        evidence_id=eid,
    )
