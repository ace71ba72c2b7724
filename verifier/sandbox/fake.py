"""FakeBackend: runs no container; a handler decides what the 'sandbox' returned.

For unit tests of our own logic (evidence decisions, parsing) only. Containment is
tested against the real engine, never against this.
"""

from __future__ import annotations

from collections.abc import Callable

from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob

Handler = Callable[[SandboxJob], RawRun]


class FakeBackend(SandboxBackend):
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.jobs: list[SandboxJob] = []

    def image_id(self, image: str) -> str:
        return "sha256:fake"

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
