"""WarmPool: pre-started, locked-down containers whose trusted runner has already imported
pytest, Hypothesis and the harness, behind the same backend interface.

Two isolation policies (recorded in every evidence as `isolation`):

- ``fresh`` (default for single checks and agent loops): a container serves ONE job and is
  destroyed; a replacement starts in the background, so container start-up and imports
  leave the critical path. Isolation equals a cold container per candidate.
- ``reuse`` (default for batches): a container serves up to `max_uses` jobs. Each job gets a
  fresh trusted child process and fresh candidate processes; between jobs every process of
  the candidate's uid is killed and every place it can write (/tmp, /dev/shm) is wiped. The
  container is recycled after `max_uses` jobs or on any sign of trouble (timeout, OOM, a
  crashed candidate, a process that would not die). What is shared across jobs: the kernel
  page cache and the container's cgroup counters, never a process or a file the candidate made.

Jobs whose container-level limits (memory, CPUs, pids, scratch, ulimits) differ from the
pool's run cold on a fresh container instead. Every container is removed on `close()`
(also from `atexit` and on Ctrl-C through the context manager); `verifier gc` catches the rest.
"""

from __future__ import annotations

import atexit
import queue
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import docker
import docker.errors
import requests.exceptions

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.limits import Limits
from verifier.sandbox.attach import STDERR, pieces
from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.docker_engine import DockerBackend, _remove, connect, owner_labels
from verifier.sandbox.hardening import container_kwargs

Policy = Literal["fresh", "reuse"]
SERVER_COMMAND = ("python3", "-I", "-B", "-m", "verifier_runner.launch", "--max-jobs")
READY = b"VERIFIER-READY"
RESULT = b"VERIFIER-RESULT "
#: Container-level fields: a job must match them to run in a pooled container.
CONTAINER_FIELDS = (
    "memory_bytes",
    "cpus",
    "pids",
    "scratch_bytes",
    "open_files",
    "file_size_bytes",
    "network",
    "runtime",
)
START_TIMEOUT_S = 60.0
SWEEP_TIMEOUT_S = 30.0
LABEL_POOL_ID = "org.verifier.pool-id"
ACQUIRE_TIMEOUT_S = 120.0


class _Broken(Exception):
    """The container died or stopped answering."""


class _Warm:
    """One started container: its attach socket, and a reader that splits its output."""

    def __init__(self, api: Any, name: str, cid: str, sock: socket.socket, image_id: str) -> None:
        self.api, self.name, self.cid, self.sock, self.image_id = api, name, cid, sock, image_id
        self.cond = threading.Condition()
        self.ready = False
        self.eof = False
        self.uses = 0
        self.started = time.monotonic()
        self.cap = 1 << 20
        self.out = bytearray()
        self.err = bytearray()
        self.result: bytes | None = None
        self.limited = False
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"warm-{name}")
        self.reader.start()

    def _read(self) -> None:
        pending = bytearray()
        for kind, data in pieces(self.sock):
            with self.cond:
                if kind == STDERR:
                    room = self.cap - len(self.err)
                    self.err += data[: max(room, 0)]
                    self.limited |= len(data) > room
                    continue
                pending += data
                while b"\n" in pending:
                    line, _, rest = bytes(pending).partition(b"\n")
                    pending = bytearray(rest)
                    if line == READY:
                        self.ready = True
                    elif line.startswith(RESULT):
                        self.result = line
                    elif len(self.out) < self.cap:
                        self.out += line[: self.cap - len(self.out)] + b"\n"
                    else:
                        self.limited = True
                if len(pending) > self.cap:  # an endless line: no result can be in it
                    self.limited = True
                    pending.clear()
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_ready(self, timeout: float) -> bool:
        with self.cond:
            self.cond.wait_for(lambda: self.ready or self.eof, timeout)
            return self.ready and not self.eof

    def submit(self, stdin: bytes, timeout: float, cap: int) -> tuple[bytes | None, bool]:
        """Send one job; (result line or None, timed_out)."""
        with self.cond:
            if self.eof:
                raise _Broken("the container is gone")
            self.out, self.err, self.result, self.limited, self.cap = bytearray(), bytearray(), None, False, cap
        self.uses += 1
        try:
            self.sock.sendall(stdin)
        except OSError as exc:
            raise _Broken(f"cannot send the job: {exc}") from exc
        with self.cond:
            done = self.cond.wait_for(lambda: self.result is not None or self.eof or self.limited, timeout)
            return self.result, not done


@dataclass
class PoolStats:
    started: int = 0
    destroyed: int = 0
    cold_fallbacks: int = 0
    broken: int = 0


class WarmPool(SandboxBackend):
    """A pool of warm sandbox containers. Use as a context manager."""

    def __init__(
        self,
        *,
        image: str,
        limits: Limits | None = None,
        size: int = 2,
        policy: Policy = "fresh",
        max_uses: int = 200,
        client: docker.DockerClient | None = None,
        preload: str = "pytest,hypothesis",
        idle_timeout_s: float | None = 600.0,
    ) -> None:
        if size < 1:
            raise ValueError("pool size must be at least 1")
        if policy not in ("fresh", "reuse"):
            raise ValueError(f"policy must be 'fresh' or 'reuse', not {policy!r}")
        self.image = image
        self.limits = limits or Limits()
        self.size = size
        self.isolation = policy
        self.max_uses = 1 if policy == "fresh" else max_uses
        self.preload = preload
        #: Idle containers older than this are removed (and restarted on the next demand).
        self.idle_timeout_s = idle_timeout_s
        self._client = client
        self._cold = DockerBackend(client)
        self._idle: queue.Queue[_Warm] = queue.Queue()
        self._all: dict[str, _Warm] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._image_id: str | None = None
        self._starting = 0
        self._fatal: SandboxUnavailable | None = None
        #: Every container of this pool carries this label, so close() can find them all, also
        #: ones whose removal failed while the engine was down or restarting.
        self.pool_id = uuid.uuid4().hex
        self.stats = PoolStats()
        self._demand = time.monotonic()
        atexit.register(self.close)
        for _ in range(size):
            self._start_async()
        if idle_timeout_s is not None:
            threading.Thread(target=self._janitor, daemon=True, name="warm-janitor").start()

    # -- the engine ---------------------------------------------------------------
    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    def image_id(self, image: str) -> str:
        if image == self.image:
            if self._image_id is None:
                self._image_id = self._cold.image_id(image)
            return self._image_id
        return self._cold.image_id(image)

    def _start_async(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._starting += 1
        threading.Thread(target=self._start_one, daemon=True, name="warm-start").start()

    def _start_one(self) -> None:
        backoff = 0.5
        try:
            while not self._closed:
                try:
                    warm = self._create()
                except ImageNotFound as exc:  # final: retrying cannot help
                    self._fatal = exc
                    return
                except (SandboxUnavailable, docker.errors.DockerException, requests.exceptions.RequestException):
                    time.sleep(backoff)  # engine down or restarting: keep trying until closed
                    backoff = min(backoff * 2, 5.0)
                    self._client = None
                    self._cold = DockerBackend()
                    continue
                if warm.wait_ready(START_TIMEOUT_S):
                    with self._lock:
                        if self._closed:
                            break
                    self._idle.put(warm)
                    return
                self._destroy(warm)
            return
        finally:
            with self._lock:
                self._starting -= 1

    def _create(self) -> _Warm:
        api = self.client.api
        image_id = self.image_id(self.image)
        name = f"verifier-pool-{uuid.uuid4().hex[:12]}"
        job = SandboxJob(image=self.image, command=(), limits=self.limits, mode="launcher")
        kwargs = container_kwargs(job, owner_labels({"org.verifier.pool": self.isolation, LABEL_POOL_ID: self.pool_id}))
        host_config = api.create_host_config(**kwargs.pop("host_config"))
        command = [*SERVER_COMMAND, str(self.max_uses), "--preload", self.preload or ","]
        try:
            cid = api.create_container(image_id, command=command, name=name, host_config=host_config, **kwargs)["Id"]
            raw = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            sock: socket.socket = getattr(raw, "_sock", raw)
            sock.settimeout(None)
            api.start(cid)
        except BaseException:
            _remove(api, name)
            raise
        warm = _Warm(api, name, cid, sock, image_id)
        with self._lock:
            self._all[name] = warm
            self.stats.started += 1
        return warm

    def _destroy(self, warm: _Warm) -> None:
        with self._lock:
            self._all.pop(warm.name, None)
            self.stats.destroyed += 1
        try:
            warm.sock.close()
        except OSError:
            pass
        _remove(warm.api, warm.name)

    # -- jobs ---------------------------------------------------------------------
    def _compatible(self, job: SandboxJob) -> bool:
        return (
            job.mode == "launcher"
            and job.image == self.image
            and all(getattr(job.limits, f) == getattr(self.limits, f) for f in CONTAINER_FIELDS)
        )

    def _janitor(self) -> None:
        """Release idle containers when the pool has not been used for idle_timeout_s."""
        assert self.idle_timeout_s is not None
        period = max(0.05, min(self.idle_timeout_s / 4, 5.0))
        while not self._closed:
            time.sleep(period)
            if time.monotonic() - self._demand < self.idle_timeout_s:
                continue
            while True:
                try:
                    warm = self._idle.get_nowait()
                except queue.Empty:
                    break
                self._destroy(warm)

    def _acquire(self) -> _Warm:
        self._demand = time.monotonic()
        deadline = time.monotonic() + ACQUIRE_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._closed:
                raise SandboxUnavailable("the pool is closed")
            if self._fatal is not None:
                raise self._fatal
            with self._lock:
                short = self.size - len(self._all) - self._starting
            for _ in range(max(short, 0)):
                self._start_async()
            try:
                warm = self._idle.get(timeout=0.5)
            except queue.Empty:
                continue
            if warm.eof:  # died while idle (killed from outside, engine restart)
                self.stats.broken += 1
                self._destroy(warm)
                continue
            return warm
        raise SandboxUnavailable(f"no warm sandbox became available within {ACQUIRE_TIMEOUT_S:.0f} s")

    def run(self, job: SandboxJob) -> RawRun:
        if not self._compatible(job):
            self.stats.cold_fallbacks += 1
            return self._cold.run(job)
        queued = time.monotonic()
        for attempt in range(2):
            warm = self._acquire()
            started = time.monotonic()
            try:
                line, timed_out = warm.submit(job.stdin, job.limits.timeout_s, job.limits.output_bytes)
            except _Broken:
                line, timed_out = None, False
            if line is not None or timed_out or attempt == 1 or not warm.eof:
                break
            # The container died before answering (killed from outside, engine restart): the
            # job never ran to a result, so it is safe to run it once more on another one.
            self.stats.broken += 1
            self._recycle(warm)
        return self._finish(job, warm, line, timed_out, queued, started)

    def _recycle(self, warm: _Warm) -> None:
        # Remove in the background: removal is not on the caller's critical path.
        threading.Thread(target=self._destroy, args=(warm,), daemon=True).start()
        self._start_async()

    def _finish(
        self, job: SandboxJob, warm: _Warm, line: bytes | None, timed_out: bool, queued: float, started: float
    ) -> RawRun:
        recycle = True
        try:
            finished = time.monotonic()
            if timed_out:
                try:
                    warm.api.kill(warm.cid)
                except (docker.errors.DockerException, requests.exceptions.RequestException):
                    pass
            with warm.cond:
                err, out, limited, eof = bytes(warm.err), bytes(warm.out), warm.limited, warm.eof
            oom = False
            if line is None or eof:
                oom = self._oom_killed(warm)
            recycle = (
                line is None
                or eof
                or timed_out
                or limited
                or warm.uses >= self.max_uses
                or self.isolation == "fresh"
                or b'"recycle": true' in line
            )
            return RawRun(
                exit_code=None if not eof else -1,
                stdout=out + (line + b"\n" if line else b""),
                stderr=err,
                truncated=limited,
                timed_out=timed_out,
                oom_killed=oom,
                output_limited=limited,
                duration_s=finished - started,
                overhead_s=0.0,
                image_id=warm.image_id,
                container_id=warm.cid,
                queue_s=started - queued,
            )
        finally:
            if recycle or self._closed:
                self._recycle(warm)
            else:
                self._idle.put(warm)

    @staticmethod
    def _oom_killed(warm: _Warm) -> bool:
        try:
            return bool(warm.api.inspect_container(warm.cid)["State"].get("OOMKilled"))
        except (docker.errors.DockerException, requests.exceptions.RequestException):
            return False

    def warm_up(self, timeout: float = START_TIMEOUT_S) -> int:
        """Wait until `size` containers are ready (or timeout); returns how many are idle."""
        deadline = time.monotonic() + timeout
        while self._idle.qsize() < self.size and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._idle.qsize()

    def close(self) -> None:
        with self._lock:
            if self._closed and not self._all:
                return
            self._closed = True
            victims = list(self._all.values())
        for warm in victims:
            self._destroy(warm)
        while True:  # containers a starter thread created after we looked
            with self._lock:
                if self._starting == 0 and not self._all:
                    break
                late = list(self._all.values())
            for warm in late:
                self._destroy(warm)
            time.sleep(0.05)
        self._sweep()
        atexit.unregister(self.close)

    def _sweep(self, timeout: float = SWEEP_TIMEOUT_S) -> None:
        """Remove every container carrying this pool's label; retry while the engine is away."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                api = connect().api
                left = api.containers(all=True, filters={"label": f"{LABEL_POOL_ID}={self.pool_id}"})
                for c in left:
                    _remove(api, c["Id"])
                if not api.containers(all=True, filters={"label": f"{LABEL_POOL_ID}={self.pool_id}"}):
                    return
            except (SandboxUnavailable, docker.errors.DockerException, requests.exceptions.RequestException):
                pass
            if time.monotonic() > deadline:
                return  # `verifier gc` removes what is left once this process is gone
            time.sleep(0.5)
