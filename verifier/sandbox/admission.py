"""Admission control: at most N sandbox jobs run at once on this machine, across every process.

Forty `verifier check` processes started together on a 2-core machine would each get a
twentieth of a CPU; correct candidates would then look slow. Instead each job holds one of N
slots while it runs (N = the CPU count by default, `VERIFIER_MAX_SANDBOXES` to change it) and
waits for one before it starts; the wait is recorded (`durations.queue_s`) and never charged
to the candidate. A job that cannot get a slot within the wait limit ends `overloaded`.

Slots are `flock` locks on files in a folder shared by all processes of this machine, so a
process that dies releases its slot with it. Waiting is fair: a job first queues on a door
lock (a blocking `flock`, which the kernel grants to one waiter at a time; a job that finds
the door free takes it at once), and only the job at the door looks for a free slot. A batch
that gives back a slot and wants it again for its next job queues behind the jobs already
waiting, so no process can keep the slots to itself. The job at the door polls the slots
(`POLL_S`), and hears at once when a job of its own process gives one back; while its own
process holds every slot (nobody else can free one) it only listens.
Jobs on a remote engine (DOCKER_HOST) are counted by the machine that sends them.
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from verifier.errors import HostOverloaded

#: How long a job waits for a slot before it is reported `overloaded`.
DEFAULT_WAIT_S = 600.0
ENV_SLOTS = "VERIFIER_MAX_SANDBOXES"
ENV_DIR = "VERIFIER_SLOTS_DIR"
#: How often the job at the door looks for a slot another process freed.
POLL_S = 0.002
#: How often it looks while this process holds every slot itself (it hears of its own releases
#: at once; this is only a safety net).
OWN_POLL_S = 0.05


def default_slots() -> int:
    try:
        return max(1, int(os.environ[ENV_SLOTS]))
    except (KeyError, ValueError):
        return max(1, os.cpu_count() or 1)


def default_workers() -> int:
    """How many jobs a batch runs at once by default: as many as may run on this machine."""
    return default_slots()


def slots_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or Path(tempfile.gettempdir()) / "verifier-slots")


class Admission:
    """N machine-wide slots. `slot()` is a context manager that holds one while a job runs."""

    def __init__(self, slots: int | None = None, *, wait_s: float = DEFAULT_WAIT_S, folder: Path | None = None) -> None:
        self.slots = slots or default_slots()
        self.wait_s = wait_s
        self.folder = folder or slots_dir()
        self._folder = str(self.folder)
        self._ready = False
        #: Set by `close`: every wait of this instance ends (HostOverloaded), none starts.
        self._closed = threading.Event()
        #: The events the jobs queued at the door wait on (`close` sets them all).
        self._waiting: set[threading.Event] = set()
        self._waiting_lock = threading.Lock()
        #: Notified when a job of this instance gives its slot back: the job at the door in this
        #: process takes it at once instead of at its next poll (slots other processes free are
        #: still found by polling).
        self._freed = threading.Condition()
        #: Slots this instance holds (under `_freed`): while it holds every one, no other process
        #: can free one, so the job at the door waits for this instance's own release only.
        self._held = 0
        #: What this instance's jobs wait for (read by progress lines: `waiting`, `waited_s`).
        self._stats = threading.Lock()
        self._queued = 0
        self._waited_s = 0.0
        #: When each wait still going on began (one entry per waiting job), so that `waited_s`
        #: grows while jobs wait, not only once a wait ends.
        self._since: list[float] = []

    @property
    def waiting(self) -> int:
        """This instance's jobs waiting for a machine-wide slot right now."""
        return self._queued

    @property
    def waited_s(self) -> float:
        """Seconds this instance's jobs have waited for slots in all, the waits still going on
        included up to now (a run held up for minutes says so while it is held up)."""
        now = time.monotonic()
        with self._stats:
            return self._waited_s + sum(now - since for since in self._since)

    def close(self) -> None:
        """Stop waiting: the jobs of this instance still waiting for a slot (and any that asks
        later) get HostOverloaded at once, so that a service that is shutting down is not held
        by its queue. Slots already held are untouched."""
        self._closed.set()
        with self._waiting_lock:
            for wake in self._waiting:
                wake.set()
        with self._freed:  # the job at the door, looking for a slot, hears it at once too
            self._freed.notify_all()

    def _open(self, name: str) -> int:
        """A lock file of the folder, made (shared by every user's verifier on this machine) on
        this instance's first use, or again if someone removed it meanwhile."""
        # A str path: the door's holder polls the slots every 2 ms, and a pathlib join per poll
        # was most of the polling's CPU (measured through verifier serve).
        path = os.path.join(self._folder, name)
        if self._ready:
            try:
                return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except FileNotFoundError:
                pass
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            os.chmod(self.folder, 0o1777)
        except OSError:
            pass
        self._ready = True
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)

    def _try(self, index: int) -> int | None:
        fd = self._open(f"slot-{index}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            raise
        return fd

    def _door(self, started: float, wait_s: float) -> int:
        """Queue on the door lock; its fd once this process is at the door. Raises HostOverloaded."""
        fd = self._open("door")
        try:  # nobody at the door (the usual case): no waiting thread needed
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        wake = threading.Event()  # the door is ours, or close() was called
        state = {"abandoned": False, "at_door": False}
        lock = threading.Lock()

        def queue() -> None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # blocks in the kernel's queue of waiters
            with lock:
                if state["abandoned"]:
                    os.close(fd)  # the waiter gave up meanwhile: pass the door on
                    return
                state["at_door"] = True
                wake.set()

        with self._waiting_lock:
            self._waiting.add(wake)
        if self._closed.is_set():
            wake.set()
        threading.Thread(target=queue, daemon=True, name="admission-door").start()
        try:
            wake.wait(max(0.0, wait_s - (time.monotonic() - started)))
        finally:
            with self._waiting_lock:
                self._waiting.discard(wake)
        with lock:
            if state["at_door"]:
                return fd
            state["abandoned"] = True
        raise self.overloaded(wait_s)

    def overloaded(self, wait_s: float | None = None) -> HostOverloaded:
        """What a job that got no slot within `wait_s` (this instance's wait limit when None) is told."""
        if self._closed.is_set():
            return HostOverloaded("the service is shutting down: it starts no more sandbox jobs")
        return HostOverloaded(
            f"no sandbox slot came free within {self.wait_s if wait_s is None else wait_s:.0f} s "
            f"({self.slots} may run at once on this machine; {ENV_SLOTS} sets it)"
        )

    @contextmanager
    def slot(self, wait_s: float | None = None) -> Iterator[float]:
        """Wait for a free slot (at most `wait_s`, this instance's wait limit when None) and hold it;
        yields the seconds waited. Raises HostOverloaded."""
        limit = self.wait_s if wait_s is None else wait_s
        started = time.monotonic()
        if self._closed.is_set():
            raise self.overloaded(limit)
        with self._stats:
            self._queued += 1
            self._since.append(started)
        try:
            fd = self._acquire(started, limit)
        finally:
            waited = time.monotonic() - started
            with self._stats:
                self._queued -= 1
                self._since.remove(started)
                self._waited_s += waited
        try:
            yield waited
        finally:
            with self._freed:
                self._held -= 1
                os.close(fd)
                self._freed.notify_all()

    def _acquire(self, started: float, limit: float) -> int:
        """A slot's descriptor (counted in `_held`), through the door. Raises HostOverloaded."""
        order = list(range(self.slots))
        fd: int | None = None
        door = self._door(started, limit)
        try:
            while fd is None:
                random.shuffle(order)
                for index in order:
                    fd = self._try(index)
                    if fd is not None:
                        break
                if fd is None:
                    if time.monotonic() - started > limit or self._closed.is_set():
                        raise self.overloaded(limit)
                    with self._freed:
                        self._freed.wait(OWN_POLL_S if self._held >= self.slots else POLL_S)
            with self._freed:
                self._held += 1
        finally:
            os.close(door)  # the next waiter's turn (closing the descriptor releases the lock)
        return fd


class Unlimited(Admission):
    """No admission control (for tests of our own logic, and callers with their own)."""

    def __init__(self) -> None:
        super().__init__(1)

    @contextmanager
    def slot(self, wait_s: float | None = None) -> Iterator[float]:
        yield 0.0
