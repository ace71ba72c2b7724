"""Runs as the candidate's user. Forks a fresh candidate process on request from the
trusted side, reaps and kills them. It never imports or runs candidate code itself;
its children do (see candidate.py)."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys

PR_SET_CHILD_SUBREAPER = 36
CANDIDATE_DIR = "/tmp/candidate"


def _read_source(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as fh:
        size = int.from_bytes(fh.read(8), "big")
        data = fh.read(size)
    if len(data) != size:
        raise SystemExit("zygote: truncated candidate source")
    return data


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


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    config = json.loads(sys.argv[3])
    source = _read_source(int(sys.argv[2]))
    os.makedirs(CANDIDATE_DIR, mode=0o700, exist_ok=True)
    with open(f"{CANDIDATE_DIR}/{config['module']}.py", "wb") as fh:
        fh.write(source)
    del source
    try:  # orphans of candidate processes come back to us, so killall reaches them
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    try:  # under memory pressure, the kernel kills candidate processes first
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    statuses: dict[int, int] = {}
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
        if op == "spawn":
            pid = os.fork()
            if pid == 0:
                ctl.close()
                from . import candidate

                candidate.serve(fds[0], fds[1], config["module"], CANDIDATE_DIR)
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
            os.kill(-1, signal.SIGKILL)  # every process of this uid but ourselves
            _reap(statuses)
            ctl.send(b'{"ok": true}')
        else:
            ctl.send(b'{"error": "unknown op"}')


if __name__ == "__main__":
    main()
