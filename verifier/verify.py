"""The Verifier façade: candidate + suite -> Evidence.

The one place where everything that can go wrong becomes fail-closed evidence: bad
input (status invalid_input), an unavailable sandbox (infra_error), a run that ended
without the trusted side's result (infra_error, timeout, oom), and the trusted result
itself (passed only when every collected test passed).
"""

from __future__ import annotations

import base64
import json
import secrets
import socket
import time
from pathlib import Path
from typing import Any, Literal

from verifier import __version__
from verifier.errors import InvalidInput, SandboxUnavailable
from verifier.evidence import (
    MAX_UNTRUSTED_CHARS,
    Counts,
    Durations,
    Evidence,
    Failure,
    FailureKind,
    HypothesisSettings,
    Status,
    truncate,
)
from verifier.hashing import evidence_id
from verifier.inputs import Candidate, read_candidate
from verifier.limits import Limits
from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob
from verifier.suite import Suite, load_suite

_THIS_NODE = socket.gethostname()
LAUNCH_COMMAND = ("python3", "-I", "-B", "-m", "verifier_runner.launch", "--max-jobs", "1")
MAX_FAILURES = 50
#: Host-side slack past the in-container budget, for container start and result reporting.
HOST_GRACE_S = 5.0
#: Room for the trusted side's result line on top of the candidate output it carries.
RESULT_OUTPUT_BYTES = 8 * 1024**2


class Verifier:
    """Verify candidates against trusted suites in a sandbox.

    Args:
        backend: where jobs run; a `DockerBackend` on the local engine by default.
        image: the sandbox image; the image built for the current recipe by default.
        limits: resource limits (a suite's `suite.toml` may tighten or loosen them).
    """

    def __init__(
        self,
        *,
        backend: SandboxBackend | None = None,
        image: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._backend = backend
        self._image = image
        self.limits = limits or Limits()

    @classmethod
    def pooled(
        cls,
        *,
        policy: Literal["fresh", "reuse"] = "fresh",
        size: int = 2,
        limits: Limits | None = None,
        image: str | None = None,
        max_uses: int = 200,
        preload: str = "pytest,hypothesis",
    ) -> Verifier:
        """A Verifier on a warm pool (see verifier.sandbox.pool); close it to remove the containers."""
        from verifier.sandbox.image import image_tag
        from verifier.sandbox.pool import WarmPool

        limits = limits or Limits()
        image = image or image_tag()
        pool = WarmPool(
            image=image,
            limits=limits,
            size=size,
            policy=policy,
            max_uses=max_uses,
            preload=preload,
        )
        return cls(backend=pool, image=image, limits=limits)

    @property
    def backend(self) -> SandboxBackend:
        if self._backend is None:
            from verifier.sandbox.docker_engine import DockerBackend

            self._backend = DockerBackend()
        return self._backend

    @property
    def image(self) -> str:
        if self._image is None:
            from verifier.sandbox.image import image_tag

            self._image = image_tag()
        return self._image

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def planned_evidence_id(self, candidate: str | bytes | Path, suite: Path | str | Suite) -> str | None:
        """The evidence_id `check` would produce, without running; None for unusable input.

        Lets an evidence store serve a result already computed for the same candidate,
        suite, image and limits.
        """
        try:
            cand = read_candidate(candidate)
            loaded = suite if isinstance(suite, Suite) else load_suite(suite)
            image_id = self.backend.image_id(self.image)
        except (InvalidInput, SandboxUnavailable, NotImplementedError):
            return None
        limits = self.limits.model_copy(update=loaded.limits) if loaded.limits else self.limits
        return evidence_id(
            candidate_sha256=cand.sha256, suite_sha256=loaded.sha256, image_id=image_id, limits=limits.model_dump()
        )

    # ------------------------------------------------------------------------------
    def check(self, candidate: str | bytes | Path, suite: Path | str | Suite) -> Evidence:
        """Verify `candidate` (a Path to a file, or source as str/bytes) against `suite`.

        Never raises for a bad candidate, a bad suite or a broken sandbox: the evidence
        says what happened (status invalid_input / infra_error), with ok false.
        """
        started = time.monotonic()
        cand: Candidate | None = None
        loaded: Suite | None = None
        try:
            cand = read_candidate(candidate)
            loaded = suite if isinstance(suite, Suite) else load_suite(suite)
        except InvalidInput as exc:
            return self._closed(Status.INVALID_INPUT, str(exc), cand, loaded, started)
        limits = self.limits.model_copy(update=loaded.limits) if loaded.limits else self.limits
        syntax = cand.syntax_error()
        if syntax is not None:
            failure = Failure(
                test_id="<candidate>",
                kind=FailureKind.SYNTAX_ERROR,
                message=f"syntax error at {syntax}",
            )
            return self._closed(
                Status.ERROR,
                f"the candidate has a syntax error at {syntax}",
                cand,
                loaded,
                started,
                limits=limits,
                failures=[failure],
            )
        try:
            job, nonce = self._job(cand, loaded, limits)
            raw = self.backend.run(job)
        except SandboxUnavailable as exc:
            return self._closed(
                Status.INFRA_ERROR,
                f"sandbox unavailable: {exc}",
                cand,
                loaded,
                started,
                limits=limits,
            )
        return self._from_run(raw, nonce, cand, loaded, limits, started)

    def _job(self, cand: Candidate, suite: Suite, limits: Limits) -> tuple[SandboxJob, str]:
        nonce = secrets.token_hex(16)
        suite_blob = json.dumps({"files": {p: base64.b64encode(b).decode() for p, b in suite.files.items()}}).encode()
        header = {
            "version": 1,
            "nonce": nonce,
            "module": suite.module,
            "candidate_bytes": len(cand.source),
            "suite_bytes": len(suite_blob),
            "config": {
                "budget_s": limits.timeout_s,
                "call_timeout_s": limits.call_timeout_s,
                "output_bytes": limits.output_bytes,
                "max_examples": suite.max_examples,
                "runner": suite.runner,
                "uses_hypothesis": suite.uses_hypothesis,
            },
        }
        stdin = json.dumps(header).encode() + b"\n" + cand.source + suite_blob
        job_limits = limits.model_copy(
            update={
                "timeout_s": limits.timeout_s + HOST_GRACE_S,
                "output_bytes": limits.output_bytes * 2 + RESULT_OUTPUT_BYTES,
            }
        )
        job = SandboxJob(
            image=self.image,
            command=LAUNCH_COMMAND,
            limits=job_limits,
            stdin=stdin,
            mode="launcher",
        )
        return job, nonce

    # ------------------------------------------------------------------------------
    def _from_run(
        self, raw: RawRun, nonce: str, cand: Candidate, suite: Suite, limits: Limits, started: float
    ) -> Evidence:
        result = _parse_result(raw, nonce)
        durations = Durations(
            total_s=time.monotonic() - started,
            queue_s=raw.queue_s,
            sandbox_s=raw.overhead_s,
            # In-container time not spent running tests: interpreter start and imports on a
            # cold container, next to nothing on a warm one.
            runner_start_s=max(0.0, raw.duration_s - float(result.get("tests_s", 0.0))) if result else 0.0,
            tests_s=float(result.get("tests_s", 0.0)) if result else 0.0,
        )
        common: dict[str, Any] = {
            "limits": limits,
            "image_id": raw.image_id,
            "durations": durations,
            "hypothesis": HypothesisSettings(max_examples=suite.max_examples),
            "isolation": self.backend.isolation,
            "runner": suite.runner,
            "node": raw.node or _THIS_NODE,
        }
        if result is not None and "sandbox_error" in result:
            reason = f"the sandbox failed: {result['sandbox_error']}"
            failure = Failure(test_id="<run>", kind=FailureKind.INFRA, message=truncate(reason))
            return self._closed(Status.INFRA_ERROR, reason, cand, suite, started, failures=[failure], **common)
        if result is None:
            stderr_tail = raw.stderr.decode("utf-8", "replace")[-1500:]
            if raw.oom_killed:
                status, reason = (
                    Status.OOM,
                    "the sandbox ran out of memory before the tests reported",
                )
            elif raw.timed_out:
                status, reason = (
                    Status.TIMEOUT,
                    f"the run exceeded its {limits.timeout_s:g} s limit and was killed",
                )
            else:
                status = Status.INFRA_ERROR
                reason = f"the trusted runner ended without a result (exit code {raw.exit_code})"
            failure = Failure(
                test_id="<run>",
                kind=FailureKind(status.value if status in (Status.OOM, Status.TIMEOUT) else "infra"),
                message=reason,
                detail_untrusted=truncate(stderr_tail, MAX_UNTRUSTED_CHARS),
            )
            return self._closed(status, reason, cand, suite, started, failures=[failure], **common)

        counts = Counts(**result["counts"])
        failures = [_failure(f) for f in result["failures"][:MAX_FAILURES]]
        kinds = {f.kind for f in failures}
        output = str(result.get("candidate_output", ""))
        out_truncated = int(result.get("candidate_output_bytes", 0)) > len(output.encode())
        proven = (
            result.get("exit_code") == 0
            and counts.expected >= 1
            and counts.passed == counts.expected
            and counts.failed == counts.errors == counts.skipped == 0
            and not failures
            and not raw.oom_killed
            and not raw.timed_out
        )
        if proven:
            status, reason = Status.PASSED, f"all {counts.expected} collected tests passed"
        elif raw.oom_killed or FailureKind.OOM in kinds:
            status, reason = Status.OOM, "the candidate ran out of memory"
        elif raw.timed_out or FailureKind.TIMEOUT in kinds:
            status, reason = Status.TIMEOUT, "the candidate exceeded a time limit"
        elif FailureKind.OUTPUT_LIMIT in kinds:
            status, reason = (
                Status.OUTPUT_LIMIT,
                f"the candidate wrote more than {limits.output_bytes} bytes",
            )
        elif result.get("import_error") or FailureKind.IMPORT_ERROR in kinds:
            status, reason = Status.ERROR, "the candidate could not be imported"
        elif counts.expected == 0:
            status, reason = Status.ERROR, "no test was collected, so nothing is proven"
        elif FailureKind.COLLECTION_ERROR in kinds or counts.errors:
            status, reason = Status.ERROR, f"{counts.errors} test(s) could not run"
        else:
            status = Status.FAILED
            reason = f"{counts.passed} of {counts.expected} tests passed"
            if counts.skipped:
                reason += f"; {counts.skipped} skipped, which never counts as a pass"
        if result.get("import_error") and not any(f.kind is FailureKind.IMPORT_ERROR for f in failures):
            failures.insert(
                0,
                Failure(
                    test_id="<candidate>",
                    kind=FailureKind.IMPORT_ERROR,
                    message="the candidate could not be imported",
                    detail_untrusted=truncate(str(result["import_error"]), MAX_UNTRUSTED_CHARS),
                ),
            )
        return self._make(
            ok=status is Status.PASSED,
            status=status,
            reason=reason,
            cand=cand,
            suite=suite,
            counts=counts,
            failures=failures,
            candidate_output_untrusted=truncate(output, MAX_UNTRUSTED_CHARS),
            candidate_output_truncated=out_truncated or len(output) > MAX_UNTRUSTED_CHARS,
            **common,
        )

    def fail_closed(self, status: Status, reason: str) -> Evidence:
        """Evidence with ok=false for a verification that could not run (e.g. a tool's own failure)."""
        return self._closed(status, reason, None, None, time.monotonic())

    def _closed(
        self,
        status: Status,
        reason: str,
        cand: Candidate | None,
        suite: Suite | None,
        started: float,
        **fields: Any,
    ) -> Evidence:
        fields.setdefault("limits", self.limits)
        fields.setdefault("image_id", "")
        fields.setdefault("durations", Durations(total_s=time.monotonic() - started))
        return self._make(ok=False, status=status, reason=reason, cand=cand, suite=suite, **fields)

    def _make(self, *, cand: Candidate | None, suite: Suite | None, **fields: Any) -> Evidence:
        cand_sha = cand.sha256 if cand else ""
        suite_sha = suite.sha256 if suite else ""
        limits: Limits = fields["limits"]
        eid = evidence_id(
            candidate_sha256=cand_sha,
            suite_sha256=suite_sha,
            image_id=fields["image_id"],
            limits=limits.model_dump(),
        )
        return Evidence(
            evidence_id=eid,
            candidate_sha256=cand_sha,
            suite_sha256=suite_sha,
            verifier_version=__version__,
            **fields,
        )


def _parse_result(raw: RawRun, nonce: str) -> dict[str, Any] | None:
    """The trusted side's result line, or None. Only a line carrying this run's nonce counts."""
    prefix = f"VERIFIER-RESULT {nonce} ".encode()
    for line in reversed(raw.stdout.splitlines()):
        if line.startswith(prefix):
            payload = line[len(prefix) :]
            try:
                parsed: dict[str, Any] = json.loads(payload)
            except ValueError:
                return None
            return parsed
    return None


def _failure(raw: dict[str, Any]) -> Failure:
    kind = raw.get("kind", "exception")
    try:
        fk = FailureKind(kind)
    except ValueError:
        fk = FailureKind.EXCEPTION
    return Failure(
        test_id=str(raw.get("test_id", "?"))[:500],
        kind=fk,
        message=truncate(str(raw.get("message", ""))),
        falsifying_example=truncate(str(raw["falsifying_example"])) if raw.get("falsifying_example") else None,
        detail_untrusted=truncate(str(raw.get("detail_untrusted", "")), MAX_UNTRUSTED_CHARS),
    )
