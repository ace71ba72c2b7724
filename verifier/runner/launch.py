"""Container entry point. Starts as root holding only CAP_SETUID/CAP_SETGID, and drops them
before any test or candidate code runs.

stdin: one JSON header line, then the candidate's bytes, then the suite (JSON).
The candidate's bytes are handed to the zygote *before* the suite is read, so no
process of the candidate's user ever holds the suite in memory.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import BinaryIO

TRUSTED_UID = 2000
CANDIDATE_UID = 2001
TRUSTED_DIR = "/run/trusted"
PYTHON = sys.executable or "/usr/bin/python3"


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            raise EOFError(f"stdin ended after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def _drop_to(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("launch: failed to drop privileges")


def main() -> None:
    started = time.time()
    stdin = sys.stdin.buffer
    header = json.loads(stdin.readline())
    candidate = _read_exact(stdin, int(header["candidate_bytes"]))

    # SEQPACKET keeps message boundaries for the fd-passing control channel.
    ctl_trusted, ctl_zygote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    src_r, src_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the zygote-to-be
        try:
            ctl_trusted.close()
            os.close(src_w)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # never the trusted side's result channel
                os.dup2(devnull, fd)
            _drop_to(CANDIDATE_UID)
            os.set_inheritable(ctl_zygote.fileno(), True)
            os.set_inheritable(src_r, True)
            os.execve(
                PYTHON,
                [
                    PYTHON,
                    "-I",
                    "-B",
                    "-m",
                    "verifier_runner.zygote",
                    str(ctl_zygote.fileno()),
                    str(src_r),
                    json.dumps({"module": header["module"]}),
                ],
                {
                    "PATH": "/usr/bin:/bin",
                    "HOME": "/tmp",
                    "LANG": "C.UTF-8",
                    "TZ": "UTC",
                    "PYTHONHASHSEED": "0",
                },
            )
        finally:
            os._exit(127)
    ctl_zygote.close()
    os.close(src_r)
    os.write(src_w, len(candidate).to_bytes(8, "big"))
    view = memoryview(candidate)
    while view:
        view = view[os.write(src_w, view) :]
    os.close(src_w)
    suite = _read_exact(stdin, int(header["suite_bytes"]))
    _drop_to(TRUSTED_UID)
    os.makedirs(f"{TRUSTED_DIR}/suite", exist_ok=True)
    with open(f"{TRUSTED_DIR}/suite.json", "wb") as fh:
        fh.write(suite)
    header["launched_at"] = started
    header["zygote_pid"] = pid
    with open(f"{TRUSTED_DIR}/job.json", "w") as fh:
        json.dump(header, fh)
    os.set_inheritable(ctl_trusted.fileno(), True)
    os.chdir(TRUSTED_DIR)
    os.execve(
        PYTHON,
        [PYTHON, "-I", "-B", "-m", "verifier_runner.trusted", str(ctl_trusted.fileno())],
        {
            "PATH": "/usr/bin:/bin",
            "HOME": TRUSTED_DIR,
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "PYTHONHASHSEED": "0",
        },
    )


if __name__ == "__main__":
    main()
