"""The server's verifiers, the threads its checks run on, and the overload rule.

Every check is `Verifier.check` (through `verifier.batch.check_retrying`: a run that ended
`infra_error`, our fault, is run again) on a worker thread, on one of three verifiers, made once:

- `registered`: suites the configuration registers, on the configured run policy;
- `inline`: suites sent by a caller. Their tests are trusted code that the caller wrote, so they
  never share a container with anyone's later job: always the `fresh` policy (a container per
  job, destroyed after it), whatever the configuration says;
- `programs`: SandboxFusion's `/run_code` programs, on a pool of their own (their limits differ).

Every job queues for the machine-wide admission slots (`verifier.sandbox.admission`: the same
slots, in the same folder, that `verifier check` and `verifier bench` use), at most
`queue_wait_s`; one that gets none is `overloaded` (503), never a timeout (the wait is never
charged). At most `max_in_flight` checks are accepted at once (each holds a thread while it
waits); one more is `overloaded` at once. On a Ray cluster the nodes' own pools and slots do
the queueing instead, and only `max_in_flight` bounds the server's queue.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Literal

from verifier.batch import check_retrying
from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.limits import Limits, RunPolicy
from verifier.sandbox.admission import Admission
from verifier.serve.config import ServeConfig
from verifier.serve.dispatch import Dispatch
from verifier.suite import PROGRAM_MEMORY_RESERVE, Suite
from verifier.verify import Verifier

Purpose = Literal["registered", "inline", "programs"]
#: How many checks per machine-wide slot are sent on to the machine's slots at once (the rest wait
#: in the server). One: a slot freed by one of the server's checks is taken by its next one on the
#: same thread either way (`dispatch`); one or two more checks waiting at the machine's door,
#: ready to start, were measured no faster (their preparation is not what a slot waits for).
DISPATCH_PER_SLOT = 1
#: Statuses the server runs again itself: only its own faults. An overloaded answer goes back
#: to the caller at once (503 with Retry-After): the caller knows how long it may wait.
RERUN = (Status.INFRA_ERROR,)


class ObservedAdmission(Admission):
    """The machine-wide slots, counting how many of this server's jobs hold one (how many wait for
    one: `Admission.waiting`). A job's wait ends at its check's deadline (`until`), set on the
    worker thread that runs it."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(wait_s=wait_s)
        self._count = threading.Lock()
        self._local = threading.local()
        self.holding = 0

    @contextmanager
    def until(self, deadline: float) -> Iterator[None]:
        """Jobs of this thread wait for a slot until `deadline` (time.monotonic) at the latest."""
        self._local.deadline = deadline
        try:
            yield
        finally:
            self._local.deadline = None

    def _hold(self, change: int) -> None:
        with self._count:
            self.holding += change

    @contextmanager
    def slot(self, wait_s: float | None = None) -> Iterator[float]:
        deadline = getattr(self._local, "deadline", None)
        if wait_s is None and deadline is not None:
            wait_s = max(0.0, deadline - time.monotonic())
        with super().slot(wait_s) as waited:
            self._hold(1)
            try:
                yield waited
            finally:
                self._hold(-1)


def overload_reason(evidence: Evidence) -> str:
    """Why a check that never started was overloaded (a metric label): queue_full (the server's
    `max_in_flight`), stopping, or no_slot (no machine-wide slot within `queue_wait_s`)."""
    if "queue is full" in evidence.reason:
        return "queue_full"
    return "stopping" if "shutting down" in evidence.reason else "no_slot"


def program_limits(config: ServeConfig) -> Limits:
    """The container limits of `/run_code` programs: room for the largest memory a request may
    ask for, and the output limit of the [run_code] table."""
    run_code = config.run_code
    memory = max(config.limits.memory_bytes, run_code.max_memory_mb * 1024**2 + PROGRAM_MEMORY_RESERVE)
    return config.limits.model_copy(update={"memory_bytes": memory, "output_bytes": run_code.output_bytes})


class Engine:
    """The verifiers of one server and the threads its checks run on. Close it to remove every
    container (also the ones of checks still running)."""

    def __init__(self, config: ServeConfig, *, image: str | None = None, ray: str | None = None) -> None:
        self.config = config
        self.image = image
        self.ray = ray
        self.admission = ObservedAdmission(config.queue_wait_s)
        self.executor = ThreadPoolExecutor(max_workers=config.max_in_flight, thread_name_prefix="serve-check")
        self._verifiers: dict[Purpose, Verifier] = {}
        self._making = threading.Lock()
        self.in_flight = 0
        self._in_flight_lock = threading.Lock()
        #: Checks sent on to the machine's slots at once (each holds a worker thread there); the
        #: others wait in the server, in arrival order, holding nothing but their request.
        self.window = config.max_in_flight if ray is not None else max(1, DISPATCH_PER_SLOT * self.admission.slots)
        self._dispatch: Dispatch[Evidence] = Dispatch(self.window, self.executor)
        self.closing = False
        self.verifier("registered")  # its pool starts warming now
        if config.run_code.enabled:
            self.verifier("programs")

    @property
    def backend_name(self) -> str:
        return "local" if self.ray is None else "ray"

    @property
    def slots(self) -> int:
        backend = self.verifier("registered").backend_if_made
        ray_slots = getattr(backend, "slots", None) if self.ray is not None else None
        return int(ray_slots) if isinstance(ray_slots, int) else self.admission.slots

    def verifier(self, purpose: Purpose) -> Verifier:
        """The verifier of `purpose`, made on first use (its pool starts warming then)."""
        with self._making:
            made = self._verifiers.get(purpose)
            if made is None:
                made = self._verifiers[purpose] = self._make(purpose)
            return made

    def _make(self, purpose: Purpose) -> Verifier:
        config = self.config
        policy: RunPolicy = config.policy
        pool = config.pool
        limits = config.limits
        if purpose == "inline":
            policy = "fresh"
            pool = pool.model_copy(update={"size": config.inline_pool_size})
        elif purpose == "programs":
            pool = pool.model_copy(update={"size": config.run_code.pool_size, "preload": ""})
            limits = program_limits(config)
        if self.ray is not None:
            from verifier.cluster import ray_verifier

            settings = pool.model_copy(update={"policy": "reuse" if policy == "cold" else policy})
            return ray_verifier(self.ray, settings, limits=limits, image=self.image)
        return Verifier.with_policy(policy, pool, limits=limits, image=self.image, admission=self.admission)

    def warm_up(self, timeout: float) -> None:
        """Wait (at most `timeout`) until the registered suites' pool is warm."""
        warm = getattr(self.verifier("registered").backend, "warm_up", None)
        if warm is not None:
            warm(timeout)

    # -- checks ------------------------------------------------------------------------------
    async def check(
        self,
        candidate: Candidate,
        suite: Suite | Callable[[], Suite],
        purpose: Purpose,
        on_done: Callable[[], None] = lambda: None,
    ) -> Evidence:
        """The evidence of one check, made on a worker thread. Overloaded evidence (no check run)
        when `max_in_flight` checks are accepted already, when it gets no slot within
        `queue_wait_s`, or when the server is stopping. A caller that is cancelled (its client
        went away) cancels the check if it has not started; one that has goes on to its end.
        `on_done` is called once, on the event loop, when the check has ended (or was never
        started): what it holds (a principal's count) is held until then. `suite` may be a
        function that makes it: called on the worker thread when the check leaves the queue
        (`coalesce` closes a group of requests then)."""
        with self._in_flight_lock:
            full = self.closing or self.in_flight >= self.config.max_in_flight
            if not full:
                self.in_flight += 1
        if full:
            on_done()
            return self.refused(candidate, purpose)

        def ended() -> None:
            self._finished()
            on_done()

        deadline = time.monotonic() + self.config.queue_wait_s
        evidence = await self._dispatch.run(lambda: self._run(purpose, candidate, suite, deadline), deadline, ended)
        return evidence if evidence is not None else self.refused(candidate, purpose, waited=True)

    @property
    def free_workers(self) -> int:
        """Workers a check accepted now would find free (0 or less: it would wait in the server;
        `coalesce` joins requests into one job only then)."""
        return self._dispatch.free

    @property
    def queued(self) -> int:
        """Checks waiting in the server for room among those sent on to the machine's slots."""
        return self._dispatch.queued

    def _run(
        self, purpose: Purpose, candidate: Candidate, suite: Suite | Callable[[], Suite], deadline: float
    ) -> Evidence:
        # The verifier is made here, off the event loop: a Ray cluster's takes a while to start.
        verifier = self.verifier(purpose)
        if not isinstance(suite, Suite):
            suite = suite()
        with self.admission.until(deadline):
            return check_retrying(verifier, candidate, suite, retries=self.config.retries, retried=RERUN)

    def _finished(self) -> None:
        with self._in_flight_lock:
            self.in_flight -= 1

    def refused(self, candidate: Candidate, purpose: Purpose, *, waited: bool = False) -> Evidence:
        """Overloaded evidence for a check the server did not start (`waited`: for lack of a slot)."""
        if self.closing:
            reason = "the server is shutting down and starts no more checks"
        elif waited:
            reason = f"the host was too busy: {self.admission.overloaded(self.config.queue_wait_s)}"
        else:
            reason = f"the server's queue is full ({self.config.max_in_flight} checks accepted at once)"
        with self._making:
            made = self._verifiers.get(purpose)
        # Never makes a pool to say no: a verifier without a backend connects to nothing.
        verifier = made or Verifier(limits=self.config.limits, image=self.image)
        return verifier.fail_closed(Status.OVERLOADED, reason, candidate_sha256=candidate.sha256)

    # -- shutdown ----------------------------------------------------------------------------
    def close(self) -> None:
        """Start nothing more, end every wait for a slot, remove every container (of running
        checks too: they end as infra_error, nobody waits for them any more), and let the
        worker threads end."""
        self.closing = True
        self._dispatch.close()
        self.admission.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        with self._making:
            verifiers = list(self._verifiers.values())
        closers = [threading.Thread(target=v.close, name="serve-close") for v in verifiers]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()
        self.executor.shutdown(wait=True)
