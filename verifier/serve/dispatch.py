"""Jobs of an event loop run on worker threads, at most `width` at once, the rest waiting in
arrival order and holding no thread.

A worker that ends a job takes the next waiting one itself, on its own thread: between two jobs
of one slot there is no trip through the event loop. (With a semaphore on the loop, a freed slot
waited for the loop to wake the next waiter and that waiter to hand its job to a thread; with
200 clients' requests on the same loop that hop was a slot's idle time between checks.) The loop
is woken once per job, to deliver its result.

A waiting job leaves the queue at its deadline or when its caller is cancelled (it never
starts); a started job runs to its end whatever its caller does. Every job's `ended` is called
exactly once, on the loop, when it ran or when it left the queue.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")
State = Literal["queued", "started", "dropped"]


@dataclass(eq=False)
class _Job(Generic[T]):
    work: Callable[[], T]
    deadline: float
    loop: asyncio.AbstractEventLoop
    result: asyncio.Future[T | None]
    ended: Callable[[], None]
    state: State = "queued"
    timer: asyncio.TimerHandle | None = field(default=None)


class Dispatch(Generic[T]):
    """At most `width` jobs at once on `executor`'s threads; see the module's text."""

    def __init__(self, width: int, executor: Executor) -> None:
        if width < 1:
            raise ValueError("width must be at least 1")
        self.width = width
        self._executor = executor
        self._lock = threading.Lock()
        self._waiting: deque[_Job[T]] = deque()
        self._running = 0
        self._closed = False
        #: Jobs waiting for a worker now (a gauge).
        self.queued = 0

    @property
    def free(self) -> int:
        """Workers a job run now would find free (0 or less: it would wait)."""
        with self._lock:
            return self.width - self._running - len(self._waiting)

    async def run(self, work: Callable[[], T], deadline: float, ended: Callable[[], None]) -> T | None:
        """`work()`'s result (its exception raised here), or None when it did not start before
        `deadline` (time.monotonic) or the dispatch was closed first. `ended` is called on the
        loop when the job ended or left the queue, also when this caller was cancelled."""
        loop = asyncio.get_running_loop()
        job: _Job[T] = _Job(work, deadline, loop, loop.create_future(), ended)
        with self._lock:
            if self._closed:
                job.state = "dropped"
            elif self._running < self.width and not self._waiting:
                self._running += 1
                job.state = "started"
            else:
                self._waiting.append(job)
                self.queued += 1
        if job.state == "dropped":
            ended()
            return None
        if job.state == "started":
            self._start(job)
        else:
            job.timer = loop.call_later(max(0.0, deadline - time.monotonic()), self._expire, job)
        try:
            return await asyncio.shield(job.result)
        except asyncio.CancelledError:
            # The caller went away: a waiting job never starts; a started one runs to its end.
            if self._drop(job):
                self._settle(job, None)
            else:
                job.result.cancel()  # its result, when it comes, has nobody to go to
            raise

    def close(self) -> None:
        """Start nothing more: every waiting job leaves the queue (None). Running jobs end."""
        with self._lock:
            self._closed = True
            dropped = [job for job in self._waiting if job.state == "queued"]
            for job in dropped:
                job.state = "dropped"
            self._waiting.clear()
            self.queued = 0
        for job in dropped:
            self._deliver(job, None)

    # -- on the loop -----------------------------------------------------------------------
    def _expire(self, job: _Job[T]) -> None:
        if self._drop(job):
            self._settle(job, None)

    def _drop(self, job: _Job[T]) -> bool:
        """Take a waiting job out of the queue (True), or find it started or gone (False)."""
        with self._lock:
            if job.state != "queued":
                return False
            job.state = "dropped"
            self.queued -= 1
            # Left in the deque; workers skip dropped jobs (removal from the middle is O(n)).
            return True

    @staticmethod
    def _settle(job: _Job[T], value: T | BaseException | None) -> None:
        if job.timer is not None:
            job.timer.cancel()
        if not job.result.done():
            if isinstance(value, BaseException):
                job.result.set_exception(value)
            else:
                job.result.set_result(value)
        job.ended()

    def _deliver(self, job: _Job[T], value: T | BaseException | None) -> None:
        try:
            job.loop.call_soon_threadsafe(self._settle, job, value)
        except RuntimeError:  # the loop is closed: nobody waits for the result any more
            pass

    # -- on the workers ----------------------------------------------------------------------
    def _start(self, job: _Job[T]) -> None:
        try:
            self._executor.submit(self._work, job)
        except RuntimeError:  # the executor shut down: nothing starts any more
            with self._lock:
                self._running -= 1
            self._deliver(job, None)

    def _work(self, job: _Job[T] | None) -> None:
        while job is not None:
            value: T | BaseException
            try:
                value = job.work()
            except BaseException as error:  # noqa: BLE001 - delivered to the caller, raised there
                value = error
            self._deliver(job, value)
            job = self._next()

    def _next(self) -> _Job[T] | None:
        """The next waiting job, now started on this thread; None (this worker stops) when none
        waits. A job past its deadline is left to its timer."""
        expired: list[_Job[T]] = []
        try:
            with self._lock:
                while self._waiting and not self._closed:
                    job = self._waiting.popleft()
                    if job.state != "queued":
                        continue
                    self.queued -= 1
                    if time.monotonic() >= job.deadline:
                        job.state = "dropped"
                        expired.append(job)
                        continue
                    job.state = "started"
                    return job
                self._running -= 1
                return None
        finally:
            for job in expired:
                self._deliver(job, None)
