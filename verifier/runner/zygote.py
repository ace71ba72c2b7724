"""The zygote: forks candidate processes on request and resets the candidate side.

It runs as its own uid (ZYGOTE_UID) holding only CAP_SETUID/CAP_SETGID (so that its children
can become the candidate's uid) and CAP_KILL (to kill the candidate processes it made; it
never signals anything else, and sweeps the candidate's uid from a child that became it).
Candidates (another uid, no capabilities) cannot signal it,
change its rlimits or priority, or trace it: nothing a candidate does reaches the processes
that later candidates are forked from. The zygote never imports or runs candidate code; it
holds the job's source as bytes, and its children write and import it.

Requests arrive from the trusted side over a SEQPACKET socket (JSON, fds attached):

    load  {modules, program}, fd=memfd
                                 keep this job's candidate files (JSON, as on the job's stdin);
                                 `program`: a program's language and case memory (`_run`)
    spawn fds=[rpc, output]      fork a candidate process; {"pid": ...}, or {"error": ...} when it
                                 could not be forked or failed its set-up (never the candidate's)
    spawn_program {cpu_s} fds=[stdin, stdout, stderr]
                                 fork a process that runs the candidate's source as a program
                                 (program_exec.py) on these pipes; {"pid": ...}
    compile {cpu_s} fds=[stdin, stdout, stderr]
                                 fork a process that compiles the program (a compiled language of
                                 the job's `program`: languages.py); the compiler's messages on
                                 stderr, its artifact (protocol.tree) on stdout; {"pid": ...}
    add  fd=memfd                add files (the compile step's artifact, as the trusted side
                                 checked and wrote it) to the job's candidate files
    reap  {pid}                  kill it if alive; {"exit_code"|"signal"|"unknown"}, and for a
                                 process it waited for, "cpu_s" and "max_rss_kb" from the kernel
    reset                        kill every candidate process, wipe every place it can write,
                                 remove its IPC objects, check no zombie of its is left;
                                 {"ok": bool, "peak_rss_kb": the largest peak memory of any
                                 process reaped since the last reset, ...}. A reset that is not ok
                                 means the sandbox may hold a candidate's leftovers: recycle it.
                                 When a full process table (a fork bomb) leaves no room for the
                                 sweeper, the zygote first kills the candidate's processes itself.
    reset {fetch: [paths], fetch_bytes} fd=memfd
                                 the same, and the sweeper (the candidate's uid, every candidate
                                 process dead) reads the files `paths` under CANDIDATE_DIR into
                                 the memfd before it wipes (`reset.fetch`: JSON records).

The fork server and its requests are here; beside it, one job each: privileges.py (uids and
capabilities), candidate_setup.py (a child becoming a candidate process), seccomp.py (the
filter under gVisor), reset.py (the sweeper's work) and sysv_ipc.py (its IPC objects).
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
from dataclasses import dataclass
from typing import Any

from .candidate_setup import arm_candidate, enter_candidate
from .libc import PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, prctl
from .newborn import READY
from .privileges import become
from .protocol import CANDIDATE_DIR, CANDIDATE_UID, PRELOADABLE, tree, untree
from .reaper import Reaper, hold_children, in_child
from .reset import RESET_TIMEOUT_S, kill_candidates_from_here, sweep, zombies_left

#: A new candidate process says it is set up within this, or it is killed and reported (SetupFailed).
SETUP_TIMEOUT_S = 10.0
#: How a candidate process whose set-up failed exits (its parent already knows: it never said READY).
SETUP_FAILED_EXIT = 70
#: Imported once here so candidate processes start with them (candidate-side only).
COMMON_MODULES = ("typing", "math", "collections", "itertools", "functools", "re", "string", "heapq", "bisect")


class SetupFailed(Exception):
    """A candidate process ended or hung before it was ready to run the candidate's code: ours."""


def _describe(status: int) -> dict[str, object]:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exit_code": os.waitstatus_to_exitcode(status)}


def _limits_snapshot() -> tuple[Any, ...]:
    rlimits = tuple(resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NOFILE))
    return (*rlimits, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))


@dataclass
class Standby:
    """The sweeper of the last reset that was ok, kept waiting as the next candidate process.

    It was forked from the zygote (which never runs candidate code), became the candidate's uid,
    killed every other process of that uid and wiped its places; since then no candidate process
    has run. So it is as clean as a fresh fork, and a test (or a program's case) costs one fork
    instead of two. It takes its order, the job's files and its pipes on `orders`.
    """

    pid: int
    orders: socket.socket


class Zygote:
    def __init__(self, ctl: socket.socket, *, gvisor: bool = False) -> None:
        self.ctl = ctl
        #: The sandbox's kernel is gVisor: candidate processes get `seccomp.gvisor_guard`.
        self.gvisor = gvisor
        #: Every child waited for since the last reset: its status and the kernel's account (CPU
        #: time, peak memory). Under runc that is every candidate process (the zygote is their
        #: subreaper); started (SIGCHLD) by `serve`.
        self.reaper = Reaper()
        self.modules: list[str] = []
        #: A program job's language and case memory limit ({"language", "memory_mib"}); {} for Python.
        self.program: dict[str, Any] = {}
        self.files: dict[str, bytes] = {}
        #: The job's files as the trusted side sent them (protocol.tree), for a standby.
        self.tree = b""
        #: The next candidate process, already forked (see Standby); None: fork one when asked.
        self.standby: Standby | None = None
        self.snapshot = _limits_snapshot()
        #: Per SysV table, the id below which every object was removed (where ids are swept, gVisor).
        self.ipc_floors: dict[str, int] = {}

    def _fork_for_reset(self) -> int | None:
        """A child for the sweep; None when even a process table cleared from here has no room."""
        try:
            return os.fork()
        except OSError:  # the table is full: a fork bomb of the candidate's
            kill_candidates_from_here()
            self.reaper.reap()
            try:
                return os.fork()
            except OSError:
                return None

    def _reset(self, *, keep_standby: bool = True, fetch_order: dict[str, Any] | None = None) -> dict[str, Any]:
        """Sweep (`reset.sweep`), reap, and check that no zombie of the candidate's is left. The reply's
        `peak_rss_kb`: the largest peak memory of any candidate process reaped since the last reset.
        When the reset is ok (and keep_standby), its sweeper stays as the next candidate process."""
        self._end(self.standby)
        self.standby = None
        # No reaping while the sweeper kills: the dead keep their pid slots as zombies, so a fork
        # bomb cannot refill the process table while it is being emptied.
        hold_children(True)
        try:
            report, standby = self._sweep_from_child(keep_standby, fetch_order)
        finally:
            hold_children(False)
        self.reaper.reap()
        if report:
            report["zombies"] = zombies_left(os.getpid())
        peak = self.reaper.peak_rss_kb()
        self.reaper.forget()
        # Unreachable by candidates by construction (another uid); checked anyway, since a
        # changed rlimit or priority here would be inherited by every later candidate.
        intact = _limits_snapshot() == self.snapshot
        ok = bool(report) and not any(report.values()) and intact
        if ok:
            self.standby = standby
        else:
            self._end(standby)
        return {"ok": ok, **report, "zygote_intact": intact, "peak_rss_kb": peak}

    def _end(self, standby: Standby | None) -> None:
        """Kill a standby that will not be used and wait for it (it ran no candidate code: its
        status and memory are nobody's)."""
        if standby is None:
            return
        standby.orders.close()
        try:
            os.kill(standby.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.reaper.wait(standby.pid)
        self.reaper.forget(standby.pid)

    def _sweep_from_child(
        self, keep: bool, fetch_order: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Standby | None]:
        """Run `reset.sweep` in a child that becomes the candidate's uid; its report ({} when none), and
        with `keep`, the child itself, which then waits as the Standby."""
        read_end, write_end = os.pipe()
        orders, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = self._fork_for_reset()
        if pid is None:
            for fd in (read_end, write_end):
                os.close(fd)
            orders.close()
            theirs.close()
            return {"error": "no process could be started for the reset"}, None
        if pid == 0:
            try:
                in_child()
                os.close(read_end)
                orders.close()
                self.ctl.close()
                # This process may run the next job's candidate: nothing of this one stays reachable.
                self.files, self.tree, self.modules, self.program = {}, b"", [], {}
                become(CANDIDATE_UID)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                sweep(write_end, self.ipc_floors, fetch_order)
                os.close(write_end)
                if fetch_order is not None:
                    os.close(int(fetch_order["fd"]))  # never the next candidate's
                if keep:
                    self._stand_by(theirs)
            finally:
                os._exit(0)
        os.close(write_end)
        theirs.close()
        report: dict[str, Any] = {}
        try:
            ready = select.select([read_end], [], [], RESET_TIMEOUT_S)[0]
            if ready:
                report = json.loads(os.read(read_end, 4096) or b"{}")
                self.ipc_floors = report.pop("ipc_floors", self.ipc_floors)
        except ValueError:
            report = {}
        finally:
            os.close(read_end)
        standby = Standby(pid, orders)
        if not (keep and report):
            self._end(standby)  # also a sweeper that overran its time
            return report, None
        return report, standby

    def _stand_by(self, orders: socket.socket) -> None:
        """In the sweeper, after its report: wait for an order and become that candidate process
        (see `_start`); returns (and the process exits) when the zygote drops it instead."""
        try:
            data, fds, _flags, _addr = socket.recv_fds(orders, 65536, 5)
        except OSError:
            return
        orders.close()
        if not data or len(fds) < 3:
            return
        try:
            order = json.loads(data)
            files_fd, ready_w, *pipes = fds
            with os.fdopen(files_fd, "rb") as fh:
                self.tree = fh.read()
            self.files, self.modules = untree(self.tree), [str(m) for m in order["modules"]]
            self.program = dict(order.get("program") or {})
            arm_candidate(gvisor=self.gvisor)
            self._write_files()
            self._run(str(order["op"]), pipes, int(order["cpu_s"]), ready_w)
        finally:
            os._exit(SETUP_FAILED_EXIT)  # as a fresh fork's set-up that failed (see `_start`)

    def _start(self, op: str, fds: list[int], cpu_s: int = 0) -> int:
        """Start a candidate process for `op` ("spawn": serve calls, "spawn_program": run the
        source as a program) on `fds`: the standby when there is one, else a fresh fork
        (`enter_candidate`, the job's files, then `_run`). Then wait until it says it is ready:
        it writes READY and closes the pipe just before the candidate's code runs. A process that
        fails its set-up (or dies in it) never says so: that is ours to report (SetupFailed),
        never an exit code of the candidate's. Closes `fds` here."""
        ready_r, ready_w = os.pipe()
        pid = self._order(op, fds, cpu_s, ready_w)
        if pid is None:
            try:
                pid = os.fork()
            except OSError:
                for fd in (ready_r, ready_w, *fds):
                    os.close(fd)
                raise
            if pid == 0:
                try:
                    in_child()
                    os.close(ready_r)
                    self.ctl.close()
                    enter_candidate(gvisor=self.gvisor)
                    self._write_files()
                    self._run(op, fds, cpu_s, ready_w)
                finally:
                    os._exit(SETUP_FAILED_EXIT)
        for fd in (ready_w, *fds):
            os.close(fd)
        try:
            ready = bool(select.select([ready_r], [], [], SETUP_TIMEOUT_S)[0]) and os.read(ready_r, 1) == READY
        finally:
            os.close(ready_r)
        if not ready:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise SetupFailed("a candidate process failed its set-up before the candidate's code ran")
        return pid

    def _order(self, op: str, fds: list[int], cpu_s: int, ready_w: int) -> int | None:
        """Hand the standby (if any) this job's files and `op`; its pid, or None: fork one."""
        standby, self.standby = self.standby, None
        if standby is None:
            return None
        memfd = os.memfd_create("candidate-files")
        try:
            view = memoryview(self.tree)
            while view:
                view = view[os.write(memfd, view) :]
            os.lseek(memfd, 0, os.SEEK_SET)
            order = json.dumps({"op": op, "modules": self.modules, "program": self.program, "cpu_s": cpu_s}).encode()
            socket.send_fds(standby.orders, [order], [memfd, ready_w, *fds])
        except OSError:  # it is gone (not the candidate's doing: none ran since it swept)
            self._end(standby)
            return None
        finally:
            os.close(memfd)
        standby.orders.close()
        return standby.pid

    def _run(self, op: str, fds: list[int], cpu_s: int, ready_fd: int) -> None:
        """In a candidate process with the job's files written: run the candidate."""
        reseed_preloaded()
        if op == "spawn":
            from . import candidate

            candidate.serve(fds[0], fds[1], self.modules, CANDIDATE_DIR, ready_fd)
            os._exit(0)
        from . import program_exec

        language = str(self.program.get("language", "python"))
        if op == "compile":
            program_exec.compile_program(fds, CANDIDATE_DIR, language, self._source_name(), cpu_s, ready_fd)
        if language != "python":
            memory_mib = int(self.program.get("memory_mib", 256))
            program_exec.run_native(fds, CANDIDATE_DIR, language, self._source_name(), memory_mib, cpu_s, ready_fd)
        program_exec.run(fds, self._program_path(), cpu_s, ready_fd)

    def _source_name(self) -> str:
        """The program's source file (a program in another language is one file, named by languages.py)."""
        sources = [rel for rel in self.files if "/" not in rel]
        if len(sources) != 1:
            raise ValueError("a program in another language is one file")
        return sources[0]

    def _write_files(self) -> None:
        """In a candidate child: the job's candidate files under CANDIDATE_DIR, nothing else."""
        if os.path.lexists(CANDIDATE_DIR):
            shutil.rmtree(CANDIDATE_DIR)  # never a file an earlier candidate process of this run left
        for rel, data in self.files.items():
            path = os.path.join(CANDIDATE_DIR, rel)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)

    def _program_path(self) -> str:
        """The file a program job runs: its first module's (a program is one file)."""
        return os.path.join(CANDIDATE_DIR, *self.modules[0].split(".")) + ".py"

    def _spawn_program(self, fds: list[int], cpu_backstop_s: int) -> int:
        """A process that runs the candidate's source as a program on fds [stdin, stdout, stderr]
        (program_exec.py), started like every candidate process (`_start`)."""
        return self._start("spawn_program", fds, cpu_backstop_s)

    def _reap_one(self, pid: int) -> dict[str, object]:
        reaper = self.reaper
        if pid not in reaper.statuses:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            reaper.wait(pid)
        known = reaper.statuses.get(pid)
        if known is None:
            return {"unknown": True}
        account = reaper.usage[pid]
        return {**_describe(known), "cpu_s": account.ru_utime + account.ru_stime, "max_rss_kb": account.ru_maxrss}

    def serve(self) -> None:
        self.reaper.start()
        while True:
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.ctl, 65536, 4)
            except OSError:
                data, fds = b"", []
            if not data:  # the trusted side is gone: take the candidate side down with us
                self._reset(keep_standby=False)
                return
            request = json.loads(data)
            op = request["op"]
            reply: dict[str, Any]
            if op == "load":
                self.modules = [str(m) for m in request["modules"]]
                self.program = dict(request.get("program") or {})
                with os.fdopen(fds[0], "rb") as src:
                    self.tree = src.read()
                self.files = untree(self.tree)
                reply = {"ok": True}
            elif op == "add":
                with os.fdopen(fds[0], "rb") as src:
                    self.files.update(untree(src.read()))
                self.tree = tree(self.files)
                reply = {"ok": True}
            elif op in ("spawn", "spawn_program", "compile"):
                try:
                    if op == "spawn":
                        reply = {"pid": self._start("spawn", fds)}
                    else:
                        reply = {"pid": self._start(op, fds, int(request["cpu_s"]))}
                except OSError as exc:  # no room for a process: say so, never die of it
                    reply = {"error": f"fork failed ({exc.__class__.__name__})"}
                except SetupFailed as exc:
                    reply = {"error": str(exc)}
            elif op == "reap":
                reply = self._reap_one(int(request["pid"]))
            elif op == "reset":
                order = None
                if request.get("fetch") and fds:
                    order = {"paths": list(request["fetch"]), "budget": int(request["fetch_bytes"]), "fd": fds[0]}
                try:
                    reply = self._reset(fetch_order=order)
                finally:
                    for fd in fds:
                        os.close(fd)
            else:
                reply = {"error": "unknown op"}
            self.ctl.send(json.dumps(reply).encode())


class PreloadFailed(Exception):
    """An environment's package could not be imported before fork as it must be (ours)."""


def preload_data(data: str) -> list[str]:
    """Import the environment's packages the launch command names (`protocol.data_preload`, only
    names of `protocol.PRELOADABLE`) once, before any candidate process is forked: each then starts
    with them in `sys.modules` instead of importing them itself. Every candidate process is a fresh
    fork of this process, which never runs candidate code, so what one candidate does to them (a
    monkeypatch of numpy) dies with its process. Raises PreloadFailed when a name is not one of
    PRELOADABLE or an import started a thread (a fork keeps only the forking thread)."""
    import importlib

    names = [n for n in data.split(",") if n]
    for name in names:
        if name not in PRELOADABLE:
            raise PreloadFailed(f"{name!r} is not a package the zygote may preload")
        importlib.import_module(name)
    if names and len(os.listdir("/proc/self/task")) != 1:
        raise PreloadFailed("preloading the environment's packages started a thread")
    return names


def reseed_preloaded() -> None:
    """In a new candidate process: numpy's global random state seeded afresh, as importing numpy
    would (the zygote's import seeded it once for every fork); `random` reseeds itself at fork."""
    legacy = sys.modules.get("numpy.random")
    if legacy is not None:
        legacy.seed()


def serve(ctl: socket.socket, *, gvisor: bool = False, data: str = "") -> None:
    import importlib

    # Imported once here; every candidate process (function calls or a program) inherits them.
    from . import candidate, program_exec  # noqa: F401

    for name in COMMON_MODULES:
        importlib.import_module(name)
    # An environment's packages (a test suite's on an environment image): see preload_data.
    preload_data(data)
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of candidates come back to us, and we reap them
    except OSError:
        pass  # gVisor lets only PID 1 reap orphans: there the trusted server reaps them (trusted._reset)
    Zygote(ctl, gvisor=gvisor).serve()
