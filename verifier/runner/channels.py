"""Trusted side: the plumbing to the candidate side of the sandbox. Requests to the zygote
(`control`), the candidate's output pipes drained into one bounded buffer (`OutputSink`), and
the container's count of processes killed for memory (`oom_kills`).
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import select
import socket
import struct
import termios
import threading
import time
from collections.abc import Callable
from typing import Any

from .faults import SandboxFailure

#: The zygote answers within this (its own reset gives up after 10 s).
CONTROL_TIMEOUT_S = 30.0
OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")
#: At the end of a run, how long to wait for the candidate's output already in its pipes.
OUTPUT_CATCH_UP_S = 0.5


@functools.cache
def _oom_file() -> str | None:
    """The first of OOM_FILES this container has (cgroups v1 or v2), found once per process."""
    return next((path for path in OOM_FILES if os.path.exists(path)), None)


@functools.cache
def _oom_fd() -> int | None:
    """A descriptor of this container's OOM file, opened once per process: every call into the
    candidate reads the count before it, and a read at offset 0 (`pread`) gives the file's
    content as of now, without an open and a close each time."""
    path = _oom_file()
    if path is None:
        return None
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def oom_kills() -> int:
    """The container's count of processes killed for memory so far, or -1 when unknown."""
    fd = _oom_fd()
    if fd is None:
        return -1
    try:
        text = os.pread(fd, 4096, 0)
    except OSError:
        return -1
    for line in text.splitlines():
        key, _, value = line.partition(b" ")
        if key == b"oom_kill":
            return int(value)
    return -1


def _unread(fd: int) -> int:
    """Bytes waiting in pipe `fd` (0 once it is closed)."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


class OutputSink:
    """Drains candidate output pipes; keeps `cap` bytes in all, notes anything beyond."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = bytearray()
        self.total = 0
        self.lock = threading.Lock()
        #: Pipes still being read. A read and the append of what it got happen under `lock`.
        self.open: set[int] = set()

    def drain(self, fd: int) -> None:
        def pump() -> None:
            try:
                while True:
                    select.select([fd], [], [])  # readable or closed: this thread alone reads it
                    with self.lock:
                        chunk = os.read(fd, 65536)
                        if not chunk:
                            return
                        self.total += len(chunk)
                        room = self.cap - len(self.buffer)
                        if room > 0:
                            self.buffer += chunk[:room]
            finally:
                with self.lock:
                    self.open.discard(fd)
                    os.close(fd)

        with self.lock:
            self.open.add(fd)
        threading.Thread(target=pump, daemon=True, name="candidate-output").start()

    def catch_up(self, timeout: float = OUTPUT_CATCH_UP_S) -> None:
        """Wait until everything already in the pipes is in the buffer: what the candidate wrote
        before its last answer is in the evidence, whichever thread ran first."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:  # no read is half done while we hold it
                if not any(_unread(fd) for fd in self.open):
                    return
            if time.monotonic() >= deadline:
                return
            time.sleep(0.0005)

    @property
    def exceeded(self) -> bool:
        return self.total > self.cap


def control(
    ctl: socket.socket,
    request: dict[str, Any],
    fds: list[int] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> dict[str, Any]:
    """One request to the zygote and its answer, within CONTROL_TIMEOUT_S; `meanwhile` runs
    here between the request and the wait for its answer (work of ours that need not wait).

    Raises SandboxFailure when the zygote is gone or does not answer (not the candidate's
    doing: candidates cannot reach the zygote).
    """
    try:
        ctl.settimeout(CONTROL_TIMEOUT_S)
        socket.send_fds(ctl, [json.dumps(request).encode()], fds or [])
        if meanwhile is not None:
            meanwhile()
        data = ctl.recv(65536)
        if not data:
            raise EOFError
        reply: dict[str, Any] = json.loads(data)
    except (OSError, EOFError, ValueError) as exc:
        raise SandboxFailure(f"the candidate launcher did not answer ({exc.__class__.__name__})") from None
    return reply
