"""Runs as the candidate's user. Loads each job's candidate source, forks fresh candidate
processes on request, kills and reaps them, and wipes the candidate's writable places
between jobs. It never imports or runs candidate code itself; its children do."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
CANDIDATE_DIR = "/tmp/candidate"
WIPE_DIRS = ("/tmp", "/dev/shm")
#: How long a reset may keep killing before it declares a process that would not die.
RESET_BUDGET_S = 2.0


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _reap(statuses: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = status


def _describe(status: int) -> dict[str, object]:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exit_code": os.waitstatus_to_exitcode(status)}


def _others() -> list[int]:
    """Processes of our uid other than ourselves."""
    me, uid = os.getpid(), os.getuid()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _reset(statuses: dict[int, int]) -> dict[str, object]:
    """Kill every other process of the candidate's uid and wipe its writable places."""
    survivors: list[int] = []
    deadline = time.monotonic() + RESET_BUDGET_S
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # every process we may signal, not ourselves
        except ProcessLookupError:
            pass
        _reap(statuses)
        survivors = [p for p in _others() if not _is_zombie(p)]
        # A killed process takes a moment to tear down its memory: give it that moment,
        # but a process that keeps coming back (a fork loop) fails the reset.
        if not survivors or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    statuses.clear()
    left = 0
    for top in WIPE_DIRS:
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(top, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                left += 1
    return {"ok": not survivors and not left, "survivors": len(survivors), "left_files": left}


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


#: Imported once in the zygote so candidate processes start with them (candidate-side only;
#: what a candidate does to them never reaches the trusted side).
COMMON_MODULES = ("typing", "math", "collections", "itertools", "functools", "re", "string", "heapq", "bisect")


def serve(ctl: socket.socket) -> None:
    import importlib

    from . import candidate  # imported once here; every candidate process inherits it

    for name in COMMON_MODULES:
        importlib.import_module(name)

    # Not dumpable: a candidate (same uid) cannot ptrace us or read our memory to
    # tamper with what we hand the next candidate.
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of candidates come back to us, so reset reaches them
    try:  # under memory pressure the kernel kills candidate processes first
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    statuses: dict[int, int] = {}
    module = "solution"
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 4)
        except OSError:
            data, fds = b"", []
        if not data:  # the trusted side is gone: take everything down with us
            os.kill(-1, signal.SIGKILL)
            return
        request = json.loads(data)
        op = request["op"]
        _reap(statuses)
        if op == "load":
            module = str(request["module"])
            with os.fdopen(fds[0], "rb") as src:
                source = src.read()
            shutil.rmtree(CANDIDATE_DIR, ignore_errors=True)
            os.makedirs(CANDIDATE_DIR, mode=0o700)
            with open(f"{CANDIDATE_DIR}/{module}.py", "wb") as fh:
                fh.write(source)
            del source
            ctl.send(b'{"ok": true}')
        elif op == "spawn":
            pid = os.fork()
            if pid == 0:
                ctl.close()
                candidate.serve(fds[0], fds[1], module, CANDIDATE_DIR)
                os._exit(0)
            for fd in fds:
                os.close(fd)
            ctl.send(json.dumps({"pid": pid}).encode())
        elif op == "reap":
            pid = int(request["pid"])
            if pid not in statuses:
                try:
                    os.kill(pid, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                    statuses[pid] = status
                except (ProcessLookupError, ChildProcessError):
                    pass
            known = statuses.get(pid)
            ctl.send(json.dumps(_describe(known) if known is not None else {"unknown": True}).encode())
        elif op == "killall":
            os.kill(-1, signal.SIGKILL)
            _reap(statuses)
            ctl.send(b'{"ok": true}')
        elif op == "reset":
            ctl.send(json.dumps(_reset(statuses)).encode())
        else:
            ctl.send(b'{"error": "unknown op"}')
