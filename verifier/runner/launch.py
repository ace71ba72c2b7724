"""Container entry point. Starts as root holding only CAP_SETUID/CAP_SETGID and splits into
two unprivileged users before reading any input or running any other code (no exec:
the forked processes start from this one's clean memory, which saves two interpreter starts):

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
    if pid == 0:  # the zygote: this process has read no input yet, so its memory holds nothing
        try:
            ctl_trusted.close()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # never the trusted side's job input or result channel
                os.dup2(devnull, fd)
            _drop_to(CANDIDATE_UID)
            os.environ.clear()
            os.environ.update({**BASE_ENV, "HOME": "/tmp"})
            from . import zygote

            zygote.serve(ctl_zygote)
        finally:
            os._exit(0)
    ctl_zygote.close()
    _drop_to(TRUSTED_UID)
    os.environ.clear()
    os.environ.update({**BASE_ENV, "HOME": TRUSTED_DIR})
    os.chdir(TRUSTED_DIR)
    from . import trusted

    trusted.serve(ctl_trusted, sys.argv[1:])


if __name__ == "__main__":
    main()
