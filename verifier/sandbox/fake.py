"""FakeBackend: runs no container; a handler decides what the 'sandbox' returned.

For unit tests of our own logic (evidence decisions, parsing) only. Containment is
tested against the real engine, never against this.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from verifier.hashing import canonical_json, sha256_bytes
from verifier.runner.protocol import FailureRecord, JobCounts, JobResult, format_result_line
from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.environment import Environment, env_tag
from verifier.sandbox.requirements import DependencySpec
from verifier.sandbox.runtime import KERNEL_OF

Handler = Callable[[SandboxJob], RawRun]


class FakeBackend(SandboxBackend):
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.jobs: list[SandboxJob] = []

    def image_id(self, image: str) -> str:
        return "sha256:fake"

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        """A made-up environment named by `spec`'s lines and `image` (builds nothing)."""
        digest = sha256_bytes(canonical_json([list(spec.requirements), image]))
        image_id = f"sha256:fake-env-{digest[:12]}"
        packages = tuple(spec.requirements)
        return Environment(digest, image_id, env_tag(digest), built=False, packages=packages, spec=spec)

    def run(self, job: SandboxJob) -> RawRun:
        self.jobs.append(job)
        return self.handler(job)


def raw_run(stdout: bytes = b"", **fields: object) -> RawRun:
    """A RawRun with harmless defaults, for handlers."""
    base: dict[str, object] = {
        "exit_code": 0,
        "stdout": stdout,
        "stderr": b"",
        "truncated": False,
        "timed_out": False,
        "oom_killed": False,
        "output_limited": False,
        "duration_s": 0.1,
        "overhead_s": 0.1,
        "image_id": "sha256:fake",
        "container_id": "fake",
    }
    base.update(fields)
    return RawRun(**base)  # type: ignore[arg-type]


def answer(
    job: SandboxJob,
    counts: JobCounts | None = None,
    failures: list[FailureRecord] | None = None,
    **raw: object,
) -> RawRun:
    """A RawRun carrying the runner's result line for `job` (its nonce), as the real runner
    would write it: all `counts.expected` tests passed unless counts or failures say otherwise."""
    nonce = str(json.loads(job.stdin.split(b"\n", 1)[0])["nonce"])
    counts = counts or JobCounts(expected=1, passed=1)
    failures = failures or []
    result = JobResult(
        runner="pytest",
        exit_code=0 if not failures and counts.passed == counts.expected else 1,
        counts=counts,
        failures=failures,
        failures_total=len(failures),
        kernel=KERNEL_OF[job.limits.runtime],  # what a runner under the job's runtime observes
    )
    return raw_run(format_result_line(nonce, False, result), **raw)
