"""Container entry point. Starts as root holding only CAP_SETUID/CAP_SETGID and splits into
two unprivileged users before reading any input or running any other code:

    zygote  (uid 2001, candidate)  forks candidate processes on request
    trusted (uid 2000)             reads jobs from stdin, runs the tests, reports

Usage: python3 -I -B -m verifier_runner.launch [--max-jobs N]
"""

from __future__ import annotations

import os
import socket
import sys

TRUSTED_UID = 2000
CANDIDATE_UID = 2001
TRUSTED_DIR = "/run/trusted"
PYTHON = sys.executable or "/usr/bin/python3"
BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0"}


def _drop_to(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("launch: failed to drop privileges")


def main() -> None:
    # SEQPACKET keeps message boundaries for the fd-passing control channel.
    ctl_trusted, ctl_zygote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # the zygote-to-be
        try:
            ctl_trusted.close()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # never the trusted side's job input or result channel
                os.dup2(devnull, fd)
            _drop_to(CANDIDATE_UID)
            os.set_inheritable(ctl_zygote.fileno(), True)
            os.execve(
                PYTHON,
                [PYTHON, "-I", "-B", "-m", "verifier_runner.zygote", str(ctl_zygote.fileno())],
                {**BASE_ENV, "HOME": "/tmp"},
            )
        finally:
            os._exit(127)
    ctl_zygote.close()
    _drop_to(TRUSTED_UID)
    os.set_inheritable(ctl_trusted.fileno(), True)
    os.chdir(TRUSTED_DIR)
    os.execve(
        PYTHON,
        [PYTHON, "-I", "-B", "-m", "verifier_runner.trusted", str(ctl_trusted.fileno()), *sys.argv[1:]],
        {**BASE_ENV, "HOME": TRUSTED_DIR},
    )


if __name__ == "__main__":
    main()
