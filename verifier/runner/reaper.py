"""Reaping children the moment they end, for the two processes in the sandbox that get orphans:
the trusted server (PID 1: under gVisor, where only PID 1 can be a subreaper, every orphaned
candidate process comes to it) and the zygote (the candidate processes' parent, and their
subreaper under runc).

A process that ended stays in /proc as a zombie, its name (PR_SET_NAME), pid and count readable
by every later candidate process, until its parent waits for it: a channel from one test or case
to the next unless the parent waits at once. So each of them installs a SIGCHLD handler
(`Reaper.start`) that waits for every ended child, whatever the process is doing (Python runs it
between the calls it retries: select, recv, waitpid), and records each one's wait status and the
kernel's account of it (`rusage`) by pid. Waiting for a particular child (`Reaper.wait`) reads
that record when the handler was first. A process forked from one with a Reaper calls
`in_child` first, so that it never reaps its own children behind its back.
"""

from __future__ import annotations

# _signal: the C module behind `signal`, for the calls a process makes between fork and the
# candidate's code: `signal`'s wrappers turn every number they take and give back into an enum
# member, and in a process just forked every object touched is a page copied
# (docs/performance.md, "Fewer pages touched after a fork"). Same calls, same effect, plain ints.
import _signal  # type: ignore[import-not-found]
import os
import resource
import signal
from types import FrameType

#: SIGCHLD as a signal set for `_signal.pthread_sigmask`.
_CHILDREN = (int(signal.SIGCHLD),)


class Reaper:
    """The wait status and rusage of every child reaped, by pid (until `forget`)."""

    def __init__(self) -> None:
        self.statuses: dict[int, int] = {}
        self.usage: dict[int, resource.struct_rusage] = {}

    def start(self) -> None:
        """Reap every child as it ends from now on (SIGCHLD), and those that already did."""
        signal.signal(signal.SIGCHLD, self._on_child)
        self.reap()

    def _on_child(self, _signum: int, _frame: FrameType | None) -> None:
        self.reap()

    def reap(self) -> None:
        """Wait for every child that has ended, without blocking."""
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.statuses[pid] = status
            self.usage[pid] = rusage

    def wait(self, pid: int) -> int | None:
        """Block until child `pid` has ended; its wait status (None: not a child of ours)."""
        while pid not in self.statuses:
            try:
                got, status, rusage = os.wait4(pid, 0)
            except ChildProcessError:  # the handler got it first (or it was never ours)
                break
            self.statuses[got] = status
            self.usage[got] = rusage
        return self.statuses.get(pid)

    def peak_rss_kb(self) -> int:
        """The largest peak resident memory (KiB) the kernel reported of any child reaped since
        `forget`; each counts the children that child waited for (wait4's RUSAGE_BOTH)."""
        usage = list(self.usage.values())  # one C call: the handler cannot add to it meanwhile
        return max((u.ru_maxrss for u in usage), default=0)

    def forget(self, pid: int | None = None) -> None:
        """Drop the record of child `pid` (of every child: None)."""
        if pid is None:
            self.statuses.clear()
            self.usage.clear()
        else:
            self.statuses.pop(pid, None)
            self.usage.pop(pid, None)


def in_child() -> None:
    """In a process just forked from one with a started Reaper: SIGCHLD back to its default, and
    not blocked, so that this process (and the candidate code it may run) waits for its own."""
    _signal.signal(_CHILDREN[0], _signal.SIG_DFL)
    hold_children(False)


def hold_children(hold: bool) -> None:
    """Block SIGCHLD in this thread (hold=True: its handler waits), or unblock it."""
    _signal.pthread_sigmask(_signal.SIG_BLOCK if hold else _signal.SIG_UNBLOCK, _CHILDREN)
