"""DockerBackend: one fresh, locked-down container per job, on the Docker SDK.

The only module that talks to the engine for runs. Docker's exceptions become
`SandboxUnavailable` here, chained; a job that fails is a `RawRun`, not an exception.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import docker
import docker.errors
import requests.exceptions

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.sandbox.attach import STDERR, pieces
from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.hardening import (
    LABEL_MANAGED,
    LABEL_OWNER_HOST,
    LABEL_OWNER_PID,
    container_kwargs,
)

#: Extra time the host grants past the job's limit before it kills the container:
#: covers container start, so `timeout_s` stays the time the job itself may run.
START_GRACE_S = 5.0


def connect() -> docker.DockerClient:
    """A client for the local engine, or `SandboxUnavailable` with a readable reason."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxUnavailable(
            f"the Docker engine is not answering ({exc.__class__.__name__}); "
            "start it, e.g. with scripts/ensure-docker.sh"
        ) from exc
    return client


def owner_labels(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    labels = {
        LABEL_MANAGED: "1",
        LABEL_OWNER_PID: str(os.getpid()),
        LABEL_OWNER_HOST: socket.gethostname(),
    }
    labels.update(extra or {})
    return labels


class _OutputCollector(threading.Thread):
    """Reads the multiplexed attach stream; keeps `cap` bytes per stream, then calls `on_limit`."""

    def __init__(self, sock: socket.socket, cap: int, on_limit: Any) -> None:
        super().__init__(daemon=True, name="verifier-output")
        self.sock = sock
        self.cap = cap
        self.on_limit = on_limit
        self.out = bytearray()
        self.err = bytearray()
        self.limited = False

    def run(self) -> None:
        for kind, chunk in pieces(self.sock):
            target = self.err if kind == STDERR else self.out
            room = self.cap - len(target)
            if room > 0:
                target += chunk[:room]
            if len(chunk) > room and not self.limited:
                self.limited = True
                self.on_limit()


class DockerBackend(SandboxBackend):
    """A fresh container per job: created, fed, waited on, killed if need be, always removed."""

    isolation = "fresh"

    def __init__(self, client: docker.DockerClient | None = None) -> None:
        self._client = client

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    def image_id(self, image: str) -> str:
        try:
            return str(self.client.api.inspect_image(image)["Id"])
        except docker.errors.ImageNotFound as exc:
            raise ImageNotFound(f"sandbox image {image!r} is not built; run `verifier image build`") from exc
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(f"cannot inspect image {image!r}: {exc}") from exc

    def run(self, job: SandboxJob) -> RawRun:
        api = self.client.api
        image_id = self.image_id(job.image)
        t0 = time.monotonic()
        name = f"verifier-{uuid.uuid4().hex[:12]}"
        kwargs = container_kwargs(job, owner_labels(job.labels))
        host_config = api.create_host_config(**kwargs.pop("host_config"))
        try:
            try:
                cid = api.create_container(
                    image_id,
                    command=list(job.command),
                    name=name,
                    host_config=host_config,
                    **kwargs,
                )["Id"]
                return self._run_created(api, cid, job, image_id, t0)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                raise SandboxUnavailable(f"the sandbox failed to run: {exc}") from exc
        finally:
            # By name: also when Ctrl-C arrived while the engine was still creating it.
            _remove(api, name)

    def _run_created(self, api: Any, cid: str, job: SandboxJob, image_id: str, t0: float) -> RawRun:
        raw_sock = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        sock: socket.socket = getattr(raw_sock, "_sock", raw_sock)
        sock.settimeout(None)
        killed_for: list[str] = []

        def kill(reason: str) -> None:
            if not killed_for:
                killed_for.append(reason)
            try:
                api.kill(cid)
            except (docker.errors.DockerException, requests.exceptions.RequestException):
                pass  # already gone

        def kill_in_background(reason: str) -> None:
            # The engine may hold a kill until the attach stream drains, so the collector
            # must keep reading while the kill is under way: never kill from its thread.
            threading.Thread(target=kill, args=(reason,), daemon=True, name="verifier-kill").start()

        collector = _OutputCollector(sock, job.limits.output_bytes, lambda: kill_in_background("output"))
        collector.start()
        try:
            api.start(cid)
            started = time.monotonic()
            try:
                if job.stdin:
                    sock.sendall(job.stdin)
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the process exited before reading all its input; its exit says why
            deadline = started + job.limits.timeout_s
            exit_code = _wait(api, cid, deadline)
            if exit_code is None:
                kill("timeout")
                exit_code = _wait(api, cid, time.monotonic() + 10)
            finished = time.monotonic()
            collector.join(timeout=5)
            state = api.inspect_container(cid)["State"]
        finally:
            try:
                sock.close()
            except OSError:
                pass
        overhead = (started - t0) + max(0.0, time.monotonic() - finished)
        return RawRun(
            exit_code=exit_code,
            stdout=bytes(collector.out),
            stderr=bytes(collector.err),
            truncated=collector.limited,
            timed_out=bool(killed_for and killed_for[0] == "timeout"),
            oom_killed=bool(state.get("OOMKilled")),
            output_limited=bool(killed_for and killed_for[0] == "output"),
            duration_s=finished - started,
            overhead_s=overhead,
            image_id=image_id,
            container_id=cid,
        )


def _wait(api: Any, cid: str, deadline: float) -> int | None:
    """Exit code, or None when the deadline passed first."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    try:
        return int(api.wait(cid, timeout=remaining)["StatusCode"])
    except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
        return None


def _remove(api: Any, cid: str) -> None:
    """Remove the container; survives Ctrl-C arriving during the removal itself."""
    for _ in range(3):
        try:
            api.remove_container(cid, force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except KeyboardInterrupt:
            continue
        except (docker.errors.DockerException, requests.exceptions.RequestException):
            time.sleep(0.2)
