"""Container entry point. Starts as root holding only CAP_SETUID/CAP_SETGID and splits into
unprivileged users before reading any input or running any other code (no exec: the forked
processes start from this one's clean memory, which saves interpreter starts):

    zygote  (ZYGOTE_UID, keeps SETUID/SETGID)  forks candidate processes as CANDIDATE_UID
    trusted (TRUSTED_UID, no capabilities)     reads jobs from stdin, runs the tests, reports

No root process remains. Usage: see `protocol.launch_command`.
"""

from __future__ import annotations

import os
import socket
import sys

from .privileges import become
from .protocol import BASE_ENV, KERNEL_ENV, TRUSTED_DIR, TRUSTED_UID, ZYGOTE_UID


def _option(argv: list[str], name: str) -> str:
    """The value after `name` in the launch command (the host's choice, never a job's input)."""
    return argv[argv.index(name) + 1] if name in argv[:-1] else ""


def main() -> None:
    gvisor = os.environ.get(KERNEL_ENV) == "gvisor"
    # SEQPACKET keeps message boundaries for the fd-passing control channel.
    ctl_trusted, ctl_zygote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # the zygote: this process has read no input yet, so its memory holds nothing
        try:
            ctl_trusted.close()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # never the trusted side's job input or result channel
                os.dup2(devnull, fd)
            os.close(devnull)  # candidate processes are forked from here: they get only what they need
            become(ZYGOTE_UID, keep_setuid=True)
            os.environ.clear()
            os.environ.update({**BASE_ENV, "HOME": "/"})
            os.chdir("/")
            from . import zygote

            zygote.serve(ctl_zygote, gvisor=gvisor, data=_option(sys.argv[1:], "--data"))
        finally:
            os._exit(0)
    ctl_zygote.close()
    become(TRUSTED_UID)
    os.environ.clear()
    os.environ.update({**BASE_ENV, "HOME": TRUSTED_DIR})
    os.chdir(TRUSTED_DIR)
    from . import trusted

    trusted.serve(ctl_trusted, sys.argv[1:])


if __name__ == "__main__":
    main()
