"""One process in a running container through the engine's exec API: stdin streamed in,
output read with a deadline and a cap, and a kill of the command's whole process group.

Why exec and not the SDK's copy-in: the sandbox's root file system is read-only, and the
engine then refuses `put_archive` even for a path on a tmpfs; `get_archive` does not see
tmpfs mounts at all. So file contents travel over an exec's stdin and stdout.

An agent command (`shell_command`) runs in a session and process group of its own, led by
coreutils' `timeout -s KILL`, under a small `sh` wrapper that stays outside that group:

- the wrapper names the group on stderr first thing (`GROUP_MARK`), so the host can stop the
  command at its own deadline, on an output flood or on cancellation, with one
  `kill -9 -GROUP` exec as the agent's user;
- `timeout` is the backstop, `BACKSTOP_S` after the host's deadline: it kills the group from
  inside, with no new process, so a fork bomb that fills the pids limit (and so keeps a new
  exec from starting) is still stopped;
- when the command's main process ends, the wrapper kills what it left in its group, with
  shell built-ins only: a command leaves nothing running behind it (a deliberate daemon
  starts its own session, `setsid`), and its output ends when it does.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifier.sandbox.attach import HEADER, STDERR, STDOUT, Stream
from verifier.sandbox.container import EngineError, exec_run, exec_start, exec_state

#: The wrapper's first line on stderr: the record separator and the command's process group.
GROUP_MARK = b"\x1e"
#: How much later than the host's deadline the in-container backstop kills.
BACKSTOP_S = 3.0
#: After a stop, how long the host keeps reading before it gives up on the process.
STOP_WAIT_S = BACKSTOP_S + 7.0
#: Most bytes of stderr kept (stderr only carries the wrapper's own complaints).
STDERR_CAP = 64 * 1024
#: How often a waiting reader looks at its cancel flag.
POLL_S = 0.2

Stop = Literal["timeout", "output", "cancelled"]


@dataclass(frozen=True)
class ExecOutcome:
    """What one exec did, as the host saw it."""

    stdout: bytes
    """Standard output, at most the cap."""
    stderr: bytes
    """Standard error, at most STDERR_CAP (without the process-group line)."""
    exit_code: int | None
    """The exit code the engine reported; None when unknown (the host gave up waiting)."""
    truncated: bool
    """More stdout came than the cap kept."""
    stopped: Stop | None
    """Why the host stopped it, if it did."""
    stuck: bool
    """A stop was asked for and the output did not end within STOP_WAIT_S."""
    seconds: float
    """Wall time from start to the end of its output."""


def backstop(timeout_s: float, argv: Sequence[str]) -> list[str]:
    """`argv` under coreutils' timeout: SIGKILL to its whole process group at `timeout_s`."""
    return ["timeout", "-s", "KILL", f"{timeout_s:.3f}s", *argv]


#: $1 shell, $2 command, $3 backstop. `setsid` in a background job is not a group leader, so it
#: does not fork: `$!` is the new session's (and group's) id, led by `timeout`.
_WRAPPER = r"""setsid timeout -s KILL "$3" "$1" -c "$2" 2>&1 &
g=$!
printf '\036%s\n' "$g" >&2
wait "$g"
code=$?
i=0
while kill -9 -"$g" 2>/dev/null && [ "$i" -lt 1000 ]; do i=$((i+1)); done
exit "$code"
"""


def shell_command(shell: str, command: str, backstop_s: float) -> list[str]:
    """The argv that runs `command` with `shell` in a process group of its own (stderr merged
    into stdout, in order), killed from inside at `backstop_s`, its leftovers killed at its end."""
    return ["/bin/sh", "-c", _WRAPPER, "verifier-exec", shell, command, f"{backstop_s:.3f}s"]


class Exec:
    """One exec process, started at construction. `wait` reads it to the end; `stop` (from
    any thread) kills its process group. Raises EngineError from construction."""

    def __init__(
        self,
        api: Any,
        container: str,
        argv: Sequence[str],
        *,
        user: str,
        workdir: str,
        stdin: bytes | None = None,
        stdin_timeout_s: float = 60.0,
        reports_group: bool = False,
    ) -> None:
        self.api, self.container, self.user = api, container, user
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._stop: Stop | None = None
        self._stopped_at = 0.0
        self._killed = False
        self._killer: threading.Thread | None = None
        self.group: int | None = None
        self._wants_group = reports_group
        self.id, raw = exec_start(api, container, argv, user=user, workdir=workdir, stdin=stdin is not None)
        self.stream = Stream(raw)
        self.sock = self.stream.sock
        if stdin is not None:
            self._send(stdin, stdin_timeout_s)

    def _send(self, data: bytes, timeout_s: float) -> None:
        try:
            self.sock.settimeout(timeout_s)
            self.sock.sendall(data)
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # it ended (or stalled) before reading it all: its output and exit code say why

    # -- stopping -----------------------------------------------------------------------
    def stop(self, reason: Stop) -> None:
        """Kill the command's process group (now, or as soon as it is known); the first reason wins."""
        with self._lock:
            if self._stop is None:
                self._stop, self._stopped_at = reason, time.monotonic()
            group = None if self._killed else self.group
            if group is not None:
                self._killed = True
        if group is not None:
            # In its own thread: the engine may hold the kill's own exec until this command's
            # output drains, so whoever reads the output must keep reading meanwhile.
            self._killer = threading.Thread(
                target=kill_group, args=(self.api, self.container, group, self.user), daemon=True, name="sandbox-kill"
            )
            self._killer.start()

    def _learn_group(self, group: int) -> None:
        with self._lock:
            self.group = group
            pending = self._stop
        if pending is not None:  # a stop came before the group was known
            self.stop(pending)

    # -- reading ------------------------------------------------------------------------
    def wait(
        self,
        *,
        deadline: float | None,
        cap: int,
        stop_after: int | None = None,
        cancel: threading.Event | None = None,
    ) -> ExecOutcome:
        """Read until the output ends. At `deadline` (monotonic) the command is stopped for
        "timeout"; past `stop_after` stdout bytes for "output"; when `cancel` is set for
        "cancelled". Never raises for the command's behaviour."""
        out, err = bytearray(), bytearray()
        total = 0
        head = bytearray() if self._wants_group else None  # the group line, until it is complete
        buf = bytearray()
        stuck = False
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                self.stop("cancelled")
            if deadline is not None and now >= deadline:
                self.stop("timeout")
            if self._stop is not None:
                limit = self._stopped_at + STOP_WAIT_S
                if now >= limit:
                    stuck = True
                    break
            else:
                limit = deadline if deadline is not None else now + 3600.0
            slice_s = max(0.01, limit - now)
            if cancel is not None:
                slice_s = min(slice_s, POLL_S)
            try:
                self.sock.settimeout(slice_s)
                data = self.sock.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            buf += data
            for kind, payload in frames(buf):
                if kind == STDERR and head is not None:
                    head += payload
                    if b"\n" in head:
                        line, _, rest = bytes(head).partition(b"\n")
                        head = None
                        if line.startswith(GROUP_MARK) and line[1:].isdigit():
                            self._learn_group(int(line[1:]))
                        else:
                            err += line + b"\n"
                        err += rest[:STDERR_CAP]
                elif kind == STDERR:
                    err += payload[: max(0, STDERR_CAP - len(err))]
                elif kind == STDOUT:
                    total += len(payload)
                    out += payload[: max(0, cap - len(out))]
                    if stop_after is not None and total > stop_after:
                        self.stop("output")
        self.close()
        if self._killer is not None:
            self._killer.join(timeout=STOP_WAIT_S)
        return ExecOutcome(
            stdout=bytes(out),
            stderr=bytes(err),
            exit_code=None if stuck else self._exit_code(),
            truncated=total > cap,
            stopped=self._stop,
            stuck=stuck,
            seconds=time.monotonic() - self.started,
        )

    def _exit_code(self) -> int | None:
        for _ in range(50):  # the engine may record the exit a moment after the stream ends
            try:
                running, code = exec_state(self.api, self.id)
            except EngineError:  # the engine's trouble is "unknown", not a crash
                return None
            if not running and code is not None:
                return code
            time.sleep(0.02)
        return None

    def close(self) -> None:
        """Stop reading (the process, if any, is left to the stop and the backstop)."""
        self.stream.close()


def frames(buf: bytearray) -> list[tuple[int, bytes]]:
    """Complete frames of Docker's multiplexed stream taken off the front of `buf`."""
    found: list[tuple[int, bytes]] = []
    while len(buf) >= HEADER.size:
        kind, size = HEADER.unpack_from(buf)
        if len(buf) < HEADER.size + size:
            break
        found.append((kind, bytes(buf[HEADER.size : HEADER.size + size])))
        del buf[: HEADER.size + size]
    return found


def kill_group(api: Any, container: str, group: int, user: str) -> None:
    """SIGKILL to process group `group`, as `user` (the only user who may signal it), until
    it is empty. Best effort: when no new process can start (pids limit), the backstop acts."""
    script = 'i=0; while kill -9 -"$1" 2>/dev/null && [ "$i" -lt 50 ]; do i=$((i+1)); sleep 0.02; done'
    try:
        exec_run(api, container, ["/bin/sh", "-c", script, "kill", str(group)], user=user)
    except EngineError:  # the engine refused a new process; the backstop kills at its deadline
        pass
