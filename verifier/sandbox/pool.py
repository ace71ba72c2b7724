"""WarmPool: pre-started, locked-down containers whose trusted runner has already imported
pytest, Hypothesis and the harness, behind the same backend interface.

Two isolation policies (recorded in every evidence as `isolation`):

- ``fresh`` (default for single checks and agent loops): a container serves ONE job and is
  destroyed; a replacement starts in the background, so container start-up and imports
  leave the critical path. Isolation equals a cold container per candidate.
- ``reuse`` (default for batches): a container serves up to `max_uses` jobs. Each job gets a
  fresh trusted child process and fresh candidate processes; between jobs the zygote (out of
  the candidates' reach) kills every process of the candidate's uid, wipes every place it can
  write (/tmp, /dev/shm, /dev/mqueue), removes its SysV IPC objects and checks its own limits.
  The container is recycled after `max_uses` jobs, when that reset fails, after a process was
  killed for memory, or when the container died. A timeout or a crash alone does not cost a
  recycle: the reset leaves nothing of the candidate, as after any job. What is shared across
  jobs: the kernel page cache and the container's cgroup counters, never a process, a file or
  an IPC object the candidate made (tests/adversarial/test_neighbours.py).

Jobs whose container-level limits (memory, CPUs, pids, scratch, ulimits) differ from the
pool's run cold on a fresh container instead. Warm containers are keyed by image: a job on
another image (a suite's environment image, `verifier.sandbox.environment`) runs in a pool of
that image's own, made on its first job with this pool's settings and closed with it, so two
suites with different requirements never share a warm container. Pools are keyed by the
preload too (`protocol.launch_data`: a test suite's environment packages, imported before fork).
Every container is removed on `close()`
(also from `atexit` and on Ctrl-C through the context manager); `verifier gc` catches the rest.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.limits import Limits, PoolConfig, PoolPolicy
from verifier.runner.protocol import is_launch_command, launch_command, launch_data, split_result_line
from verifier.sandbox.admission import Admission
from verifier.sandbox.backend import Environment, LanguageImage, RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.container import Client, Container, translated
from verifier.sandbox.docker_engine import DockerBackend, EngineClient
from verifier.sandbox.gc import owner_labels, sweep
from verifier.sandbox.runtime import RuntimeNotRegistered

if TYPE_CHECKING:
    from verifier.sandbox.requirements import DependencySpec

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
#: How long a warm container may take to say READY after its last result: the runner's reset
#: gives up within 10 s, its control channel within 30 s.
RESET_WAIT_S = 45.0
#: How long a container whose runner sent its last result may take to end before it is removed
#: by force (it ends within milliseconds; the wait is on a background thread).
EXIT_WAIT_S = 5.0
#: Output kept from a warm container between its jobs (the READY line, start-up noise).
IDLE_CAP = 1 << 20


@dataclass
class PoolStats:
    started: int = 0
    destroyed: int = 0
    cold_fallbacks: int = 0
    broken: int = 0
    #: Jobs run a second time because their container died before answering.
    rerun: int = 0


class WarmPool(SandboxBackend, EngineClient):
    """A pool of warm sandbox containers. Use as a context manager."""

    def __init__(
        self,
        config: PoolConfig | None = None,
        *,
        image: str,
        limits: Limits | None = None,
        client: Client | None = None,
        idle_timeout_s: float | None = 600.0,
        admission: Admission | None = None,
        data: str = "",
    ) -> None:
        self.config = config or PoolConfig()
        self.image = image
        #: The environment's packages this pool's runners import before their first job
        #: (`protocol.data_preload`); jobs that ask for others run in a pool of their own.
        self.data = data
        self.limits = limits or Limits()
        self.size = self.config.size
        self.isolation: PoolPolicy = self.config.policy
        self.max_uses = self.config.jobs_per_container
        self.preload = self.config.preload
        #: Idle containers older than this are removed (and restarted on the next demand).
        self.idle_timeout_s = idle_timeout_s
        self.admission = admission or Admission()
        EngineClient.__init__(self, client)
        self._cold = DockerBackend(client, admission=self.admission)
        self._idle: queue.Queue[Container] = queue.Queue()
        self._all: dict[str, Container] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._image_id: str | None = None
        self._starting = 0
        self._fatal: SandboxUnavailable | None = None
        #: The pools of other images (environment images) or preloads, by both: made on their first job.
        self._others: dict[tuple[str, str], WarmPool] = {}
        #: Every container of this pool carries this label, so close() can find them all, also
        #: ones whose removal failed while the engine was down or restarting.
        self.pool_id = uuid.uuid4().hex
        self.stats = PoolStats()
        self._demand = time.monotonic()
        atexit.register(self.close)
        for _ in range(self.size):
            self._start_async()
        if idle_timeout_s is not None:
            threading.Thread(target=self._janitor, daemon=True, name="warm-janitor").start()

    # -- the engine ---------------------------------------------------------------
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
                    with translated():
                        warm = self._create()
                except (ImageNotFound, RuntimeNotRegistered) as exc:  # final: retrying cannot help
                    self._fatal = exc
                    return
                except SandboxUnavailable:
                    time.sleep(backoff)  # engine down or restarting: keep trying until closed
                    backoff = min(backoff * 2, 5.0)
                    self._reconnect()
                    continue
                except Exception as exc:  # noqa: BLE001 - a fault of ours: jobs fail now, not after the acquire wait
                    what = f"{exc.__class__.__name__}: {exc}"
                    self._fatal = SandboxUnavailable(f"a sandbox could not be started ({what})")
                    return
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

    def _reconnect(self) -> None:
        self.close_client()
        self._cold = DockerBackend(self._client, admission=self.admission)

    def _create(self) -> Container:
        warm = Container.start(
            self.client.api,
            image_id=self.image_id(self.image),
            command=launch_command(self.max_uses, self.preload, self.data),
            limits=self.limits,
            mode="launcher",
            labels=owner_labels({"org.verifier.pool": self.isolation, LABEL_POOL_ID: self.pool_id}),
            cap=IDLE_CAP,
            prefix="verifier-pool",
        )
        with self._lock:
            self._all[warm.name] = warm
            self.stats.started += 1
        return warm

    def _destroy(self, warm: Container, exiting: bool = False) -> None:
        """Remove `warm`. One whose runner said its last result (`exiting`) is ending by itself:
        removed once it has, the engine is spared a kill (a runtime call of its own)."""
        with self._lock:
            self._all.pop(warm.name, None)
            self.stats.destroyed += 1
        if exiting:
            warm.wait_for(lambda: warm.eof, EXIT_WAIT_S)
        warm.remove()

    # -- jobs ---------------------------------------------------------------------
    def _compatible(self, job: SandboxJob) -> bool:
        return (
            job.mode == "launcher"
            and is_launch_command(job.command)
            and job.image == self.image
            and launch_data(job.command) == self.data
            and all(getattr(job.limits, f) == getattr(self.limits, f) for f in CONTAINER_FIELDS)
        )

    def pool_of(self, image: str, data: str = "") -> WarmPool:
        """The warm pool of `image` whose runners preload `data`: this one, or one of its own
        (made on first use)."""
        if (image, data) == (self.image, self.data):
            return self
        with self._lock:
            if self._closed:
                raise SandboxUnavailable("the pool is closed")
            other = self._others.get((image, data))
            if other is None:
                other = WarmPool(
                    self.config,
                    image=image,
                    limits=self.limits,
                    client=None if self._own_client else self._client,
                    idle_timeout_s=self.idle_timeout_s,
                    admission=self.admission,
                    data=data,
                )
                self._others[(image, data)] = other
            return other

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        return self._cold.environment(spec, image)

    def language_image(self, language: str, image: str) -> LanguageImage:
        return self._cold.language_image(language, image)

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

    def _acquire(self) -> Container:
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
            # Its last job's result came before its reset: wait for the READY after it, off the
            # next job's clock. None within the reset's own time limits, or the runner ended (it
            # ends when the reset fails, or was killed from outside): take another one.
            if not warm.take_ready(RESET_WAIT_S):
                self.stats.broken += 1
                self._recycle(warm)
                continue
            return warm
        raise SandboxUnavailable(f"no warm sandbox became available within {ACQUIRE_TIMEOUT_S:.0f} s")

    def run(self, job: SandboxJob) -> RawRun:
        if job.mode == "launcher" and is_launch_command(job.command):
            data = launch_data(job.command)
            if (job.image, data) != (self.image, self.data):
                return self.pool_of(job.image, data).run(job)
        if not self._compatible(job):
            self.stats.cold_fallbacks += 1
            return self._cold.run(job)
        queued = time.monotonic()
        with self.admission.slot():
            for attempt in range(1, 3):
                warm = self._acquire()
                started = time.monotonic()
                warm.reset_output(job.limits.output_bytes, job.progress)
                warm.uses += 1
                sent = warm.send(job.stdin)
                done = sent and warm.wait_for(
                    lambda w=warm: w.result is not None or w.eof or w.limited,  # type: ignore[misc]
                    job.limits.timeout_s,
                )
                _, _, line, _, eof = warm.output()
                if line is not None or (done and not eof) or (sent and not done) or attempt == 2:
                    break
                if warm.oom_killed():
                    break  # killed for memory under this job: that is the job's verdict, not bad luck
                # The container died before answering (killed from outside, engine restart): the
                # job never ran to a result, so it is safe to run it once more on another one.
                self.stats.broken += 1
                self.stats.rerun += 1
                self._recycle(warm)
            return self._finish(
                job, warm, timed_out=sent and not done, queued=queued, started=started, attempts=attempt
            )

    def _recycle(self, warm: Container, exiting: bool = False) -> None:
        # Remove in the background: removal is not on the caller's critical path.
        threading.Thread(target=self._destroy, args=(warm, exiting), daemon=True).start()
        self._start_async()

    def _finish(
        self, job: SandboxJob, warm: Container, *, timed_out: bool, queued: float, started: float, attempts: int
    ) -> RawRun:
        recycle = True
        exiting = False
        try:
            finished = time.monotonic()
            starved = None
            if timed_out:
                starved = warm.starved(job.limits.cpus)
                warm.kill("timeout")
            out, err, line, limited, eof = warm.output()
            split = split_result_line(line) if line is not None else None
            recycle = (
                split is None
                or split[1]
                or eof
                or timed_out
                or limited
                or warm.uses >= self.max_uses
                or self.isolation == "fresh"
            )
            # The runner ends after a result it marked last (and after nothing else we leave running).
            exiting = split is not None and split[1] and not (timed_out or limited)
            return RawRun(
                exit_code=None if not eof else -1,
                stdout=out + (line + b"\n" if line else b""),
                stderr=err,
                truncated=limited,
                timed_out=timed_out,
                oom_killed=warm.oom_killed() if line is None or eof else False,
                output_limited=warm.killed_for == "output",
                duration_s=finished - started,
                overhead_s=0.0,
                image_id=warm.image_id,
                container_id=warm.cid,
                queue_s=started - queued,
                attempts=attempts,
                host_starved=starved,
            )
        finally:
            if recycle or self._closed:
                self._recycle(warm, exiting)
            else:
                warm.reset_output(IDLE_CAP)
                self._idle.put(warm)

    def warm_up(self, timeout: float = START_TIMEOUT_S) -> int:
        """Wait until `size` containers are ready (or timeout); returns how many are idle."""
        deadline = time.monotonic() + timeout
        while self._idle.qsize() < self.size and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._idle.qsize()

    def close(self) -> None:
        with self._lock:
            others, self._others = list(self._others.values()), {}
        for other in others:
            other.close()
        with self._lock:
            if self._closed and not self._all:
                return
            self._closed = True
            victims = list(self._all.values())
        removers = [threading.Thread(target=self._destroy, args=(warm,), name="warm-remove") for warm in victims]
        for remover in removers:  # all at once: each removal mostly waits for the engine
            remover.start()
        for remover in removers:
            remover.join()
        while True:  # containers a starter thread created after we looked
            with self._lock:
                if self._starting == 0 and not self._all:
                    break
                late = list(self._all.values())
            for warm in late:
                self._destroy(warm)
            time.sleep(0.05)
        self._sweep()
        self._cold.close()
        self.close_client()
        atexit.unregister(self.close)

    def _sweep(self, timeout: float = SWEEP_TIMEOUT_S) -> None:
        """Remove every container carrying this pool's label; retry while the engine is away."""
        sweep((f"{LABEL_POOL_ID}={self.pool_id}",), timeout_s=timeout)
