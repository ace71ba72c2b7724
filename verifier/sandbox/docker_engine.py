"""DockerBackend: one fresh, locked-down container per job, on the Docker SDK.

The engine's errors become `SandboxUnavailable` (in `container`, chained); a job that fails
is a `RawRun`, not an exception. Each job holds an admission slot while its container exists.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from verifier.sandbox import container as engine
from verifier.sandbox.admission import Admission
from verifier.sandbox.backend import Environment, LanguageImage, RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.container import Client, Container, close, connect, translated
from verifier.sandbox.gc import owner_labels

if TYPE_CHECKING:
    from verifier.sandbox.requirements import DependencySpec

__all__ = ["KILL_WAIT_S", "DockerBackend", "EngineClient", "connect", "owner_labels"]

#: After a kill, how long to wait for the container to report its exit.
KILL_WAIT_S = 10.0


class EngineClient:
    """The engine client of a backend on this machine's engine: the one it was given (the
    caller's to close), or its own, connected on first use and closed by `close_client`."""

    def __init__(self, client: Client | None) -> None:
        self._client = client
        self._own_client = client is None

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = connect()
        return self._client

    def close_client(self) -> None:
        """Close the client when it is this backend's own (the next use connects again); an
        engine that is already gone is no error."""
        if self._own_client and self._client is not None:
            close(self._client)
            self._client = None


class DockerBackend(SandboxBackend, EngineClient):
    """A fresh container per job: created, fed, waited on, killed if need be, always removed."""

    isolation = "fresh"

    def __init__(self, client: Client | None = None, *, admission: Admission | None = None) -> None:
        EngineClient.__init__(self, client)
        self.admission = admission or Admission()

    def image_id(self, image: str) -> str:
        return engine.image_id(self.client.api, image)

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        from verifier.sandbox import environment

        return environment.ensure(self, spec, image)

    def language_image(self, language: str, image: str) -> LanguageImage:
        from verifier.sandbox.image import language_image

        return language_image(self.client, language)

    def run(self, job: SandboxJob) -> RawRun:
        image_id = self.image_id(job.image)
        queued = time.monotonic()
        with self.admission.slot():
            t0 = time.monotonic()
            container = Container.start(
                self.client.api,
                image_id=image_id,
                command=job.command,
                limits=job.limits,
                mode=job.mode,
                labels=owner_labels(job.labels),
                cap=job.limits.output_bytes,
            )
            try:
                with translated("the sandbox failed to run"):
                    return self._drive(container, job, queued, t0)
            finally:
                container.remove()

    def _drive(self, container: Container, job: SandboxJob, queued: float, t0: float) -> RawRun:
        started = time.monotonic()
        container.on_progress = job.progress
        container.send(job.stdin, close=True)  # a process that exited early: its exit says why
        exit_code = container.wait_exit(started + job.limits.timeout_s)
        starved = None
        if exit_code is None:
            starved = container.starved(job.limits.cpus)
            container.kill("timeout")
            exit_code = container.wait_exit(time.monotonic() + KILL_WAIT_S)
        finished = time.monotonic()
        container.reader.join(timeout=5)
        out, err, result, limited, _ = container.output()
        return RawRun(
            exit_code=exit_code,
            stdout=out + (result + b"\n" if result else b""),
            stderr=err,
            truncated=limited,
            timed_out=container.killed_for == "timeout",
            oom_killed=container.oom_killed(),
            output_limited=container.killed_for == "output",
            duration_s=finished - started,
            overhead_s=(started - t0) + max(0.0, time.monotonic() - finished),
            image_id=container.image_id,
            container_id=container.cid,
            queue_s=t0 - queued,
            host_starved=starved,
        )

    def close(self) -> None:
        self.close_client()
