"""One case of a program job as a process: forked by the zygote on three pipes made here, fed
its stdin, drained of stdout and stderr with caps, and ended on this side's charged clock, on
memory (the largest of any candidate process, from /proc while it runs and the kernel's peaks
when it ends) or on output beyond the cap; then reaped and the candidate side reset. What it
did is a `CaseRun`; `program.py` judges it. The compile step of a compiled language runs through
the same class (op "compile"). A case may fetch files the program wrote (compare = "none"
suites' `fetch_files`): the reset after it reads them before it wipes (`reset.fetch`)."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import select
import signal
import socket
import time
from dataclasses import dataclass, field

from .cases import Case
from .clock import ChargedClock
from .protocol import OVERLOAD_FACTOR, FetchedRecord, ProgramConfig
from .proxy import SandboxFailure, control, oom_kills
from .reset import candidate_processes

#: How often a running case checks the clock.
POLL_S = 0.005
#: How often a running case reads the memory of every candidate process (a scan of /proc).
MEMORY_POLL_S = 0.01
#: Reading what is left in the pipes after the reset killed every writer.
DRAIN_S = 2.0
_CHUNK = 1 << 16


@dataclass
class CaseRun:
    """What one case's process did, from this side's and the kernel's observations."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    out_total: int = 0
    err_total: int = 0
    #: Why this side ended the case early: timeout, oom, output_limit, overloaded (or None).
    ended: str | None = None
    time_limit_s: float = 0.0
    time_s: float = 0.0
    #: Wall time from the fork to the program's end (or kill), whatever the host's load.
    wall_s: float = 0.0
    #: The monotonic clock just before the zygote was asked to fork the program (0: not yet).
    forked_at: float = 0.0
    status: dict[str, object] = field(default_factory=dict)
    #: The largest resident memory of any candidate process of the case: read while it runs, and
    #: the kernel's peak of every process the zygote reaped for it (see `CaseProcess.run`).
    peak_bytes: int = 0
    oom_killed: bool = False
    reset_ok: bool = True
    #: The files fetched after the case (one record per path asked for), when it fetched any.
    fetched: list[FetchedRecord] = field(default_factory=list)


def _rss_bytes(pid: int) -> int:
    """The resident memory of `pid` now (0 when it is gone). /proc/PID/status is world-readable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _largest_rss_bytes() -> int:
    """The largest resident memory of any live candidate process now."""
    return max((_rss_bytes(pid) for pid in candidate_processes(os.getpid())), default=0)


def _exited(pid: int) -> bool:
    """Whether `pid` has ended (a zombie the zygote has not reaped yet, or gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _fetched_records(paths: tuple[str, ...], raw: bytes, reset_ok: bool) -> list[FetchedRecord]:
    """One record per path asked for, from what the sweeper wrote (`reset.fetch`): none is
    trusted unless the reset was ok (every candidate process dead, nothing left), and a path
    the sweeper did not answer for says so."""
    if not reset_ok:
        why = "not fetched: the program left processes or files that could not be removed"
        return [FetchedRecord(path=p, error=why) for p in paths]
    try:
        answered = json.loads(raw) if raw else []
    except ValueError:
        answered = []
    records: list[FetchedRecord] = []
    for index, path in enumerate(paths):
        item = answered[index] if isinstance(answered, list) and index < len(answered) else None
        if not isinstance(item, dict) or item.get("path") != path:
            records.append(FetchedRecord(path=path, error="not fetched: the reset did not read it"))
        elif isinstance(item.get("b64"), str):
            records.append(FetchedRecord(path=path, b64=item["b64"], size=int(item.get("size", 0))))
        else:
            records.append(FetchedRecord(path=path, error=str(item.get("error") or "not fetched")))
    return records


class CaseProcess:
    """One case's process, pipes and limits. `output_cap`: the most bytes of stdout (and of stderr)
    a program may write; `stderr_keep`: how many bytes of its stderr are kept."""

    def __init__(
        self,
        ctl: socket.socket,
        config: ProgramConfig,
        clock: ChargedClock,
        output_cap: int,
        stderr_keep: int,
        op: str = "spawn_program",
    ) -> None:
        self.ctl = ctl
        self.config = config
        self.clock = clock
        self.output_cap = output_cap
        self.stderr_keep = stderr_keep
        #: What the zygote starts: a case ("spawn_program") or the compile step ("compile").
        self.op = op

    def run(self, case: Case, time_limit_s: float, fetch: tuple[str, ...] = (), fetch_bytes: int = 0) -> CaseRun:
        """Run `case`; with `fetch`, the files of those paths the program left (at most
        `fetch_bytes` bytes of them in all) are read after it, before the reset wipes them."""
        run = CaseRun(time_limit_s=time_limit_s)
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        backstop = int(time_limit_s * OVERLOAD_FACTOR) + 2
        run.forked_at = time.monotonic()  # before the fork: wall_s covers all of the program's life
        try:
            reply = control(self.ctl, {"op": self.op, "cpu_s": backstop}, [stdin_r, out_w, err_w])
        finally:
            for fd in (stdin_r, out_w, err_w):
                os.close(fd)
        if not isinstance(reply.get("pid"), int):
            raise SandboxFailure(f"the candidate launcher could not start the program ({reply.get('error')})")
        pid = int(reply["pid"])
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except OSError:  # a kernel or runtime without pidfds: poll /proc instead
            pidfd = None
        oom_before = oom_kills()
        try:
            self._watch(run, pid, pidfd, case.input, stdin_w, out_r, err_r, time_limit_s)
            run.status = control(self.ctl, {"op": "reap", "pid": pid})  # kills it if still running
            run.oom_killed = run.status.get("signal") == signal.SIGKILL and oom_kills() > oom_before >= 0
            # Every process of the candidate's uid dies here, so nothing else holds the pipes:
            # what is left in them was written before the case ended (a case that ended on its
            # own has none: it ends when the pipes do).
            reset = self._reset(run, fetch, fetch_bytes)
            # The kernel's peaks: the main process's counts the children it waited for; the
            # reset's is the largest of every process the zygote reaped since the last reset, the
            # main process and (under runc, where the zygote is their subreaper) every orphan.
            for kib in (run.status.get("max_rss_kb"), reset.get("peak_rss_kb")):
                if isinstance(kib, int):
                    run.peak_bytes = max(run.peak_bytes, kib * 1024)
            self._drain(run, out_r, err_r)
        finally:
            for fd in (stdin_w, out_r, err_r, *([pidfd] if pidfd is not None else [])):
                try:
                    os.close(fd)
                except OSError:  # stdin_w may be closed already
                    pass
        return run

    def _reset(self, run: CaseRun, fetch: tuple[str, ...], fetch_bytes: int) -> dict[str, object]:
        """Reset the candidate side (the zygote's "reset"), fetching `fetch` first; the reply."""
        if not fetch:
            reset = control(self.ctl, {"op": "reset"})
            run.reset_ok = bool(reset.get("ok"))
            return reset
        memfd = os.memfd_create("fetched", os.MFD_CLOEXEC)
        try:
            reset = control(self.ctl, {"op": "reset", "fetch": list(fetch), "fetch_bytes": fetch_bytes}, [memfd])
            run.reset_ok = bool(reset.get("ok"))
            # Records of at most fetch_bytes of content (base64: 4/3) and of the paths' errors.
            raw = os.pread(memfd, fetch_bytes * 2 + (1 << 20), 0)
        finally:
            os.close(memfd)
        run.fetched = _fetched_records(fetch, raw, run.reset_ok)
        return reset

    def _take(self, run: CaseRun, fd: int, out_r: int) -> bool:
        """Read what `fd` has; False at its end."""
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        if fd == out_r:
            run.out_total += len(chunk)
            room = self.output_cap - len(run.stdout)
            if room > 0:
                run.stdout += chunk[:room]
        else:
            run.err_total += len(chunk)
            room = self.stderr_keep - len(run.stderr)
            if room > 0:
                run.stderr += chunk[:room]
        if run.out_total > self.output_cap or run.err_total > self.output_cap:
            run.ended = run.ended or "output_limit"
        return True

    def _watch(
        self,
        run: CaseRun,
        pid: int,
        pidfd: int | None,
        data: bytes,
        stdin_w: int,
        out_r: int,
        err_r: int,
        time_limit_s: float,
    ) -> None:
        """Feed and drain the program until it ends or a limit ends it. The program is every
        process of the case: it ends when the main process has exited and stdout and stderr are
        closed by every process that held them (a child still writing keeps the case, and its
        clock, running), and memory is the largest of any of them."""
        for fd in (stdin_w, out_r, err_r):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        clock = self.clock
        clock.watch(pid)
        start_charged, start_wall = clock.charged(), time.monotonic()
        pending = memoryview(data)
        feeding = True
        if not pending:
            os.close(stdin_w)
            feeding = False
        readers = {out_r, err_r}
        exited = False
        memory_at = 0.0
        try:
            while run.ended is None and not (exited and not readers):
                watch = [*readers, *([pidfd] if pidfd is not None and not exited else [])]
                readable, writable, _ = select.select(watch, [stdin_w] if feeding else [], [], POLL_S)
                if feeding and writable:
                    try:
                        pending = pending[os.write(stdin_w, pending[:_CHUNK]) :]
                    except BlockingIOError:
                        pass
                    except OSError as exc:  # the program closed its stdin: it wants no more
                        if exc.errno != errno.EPIPE:
                            raise
                        pending = pending[:0]
                    if not pending:
                        os.close(stdin_w)
                        feeding = False
                for fd in readable:
                    if fd in readers and not self._take(run, fd, out_r):
                        readers.discard(fd)
                if not exited:
                    exited = (pidfd in readable) if pidfd is not None else _exited(pid)
                    if exited:
                        clock.watch(None)  # its pid may be another process's soon
                if run.ended is not None or (exited and not readers):
                    break
                charged = clock.charged() - start_charged
                if charged >= time_limit_s:
                    run.ended = "timeout"
                elif time.monotonic() - start_wall >= time_limit_s * OVERLOAD_FACTOR:
                    run.ended = "overloaded"
                elif time.monotonic() - memory_at >= MEMORY_POLL_S:
                    memory_at = time.monotonic()
                    run.peak_bytes = max(run.peak_bytes, _largest_rss_bytes())
                    if run.peak_bytes > self.config.memory_bytes:
                        run.ended = "oom"
        finally:
            if feeding:
                os.close(stdin_w)
            run.time_s = clock.charged() - start_charged
            run.wall_s = time.monotonic() - (run.forked_at or start_wall)
            clock.watch(None)

    def _drain(self, run: CaseRun, out_r: int, err_r: int) -> None:
        readers = {out_r, err_r}
        deadline = time.monotonic() + DRAIN_S
        while readers and time.monotonic() < deadline:
            readable = select.select(list(readers), [], [], max(0.0, deadline - time.monotonic()))[0]
            for fd in readable:
                if not self._take(run, fd, out_r):
                    readers.discard(fd)
