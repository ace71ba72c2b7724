"""A node's lifeline: removes the sandbox containers of a process that died without closing them.

A Ray actor that owns a warm pool closes it when the driver closes the backend. When the actor is
killed instead (its node's raylet died, the driver was killed and Ray ended the actors it owned),
no Python code of the actor runs again, and its containers would keep running on the node's engine.
So each actor starts a lifeline first: a small process, detached from the actor (Ray ends a
worker's own children with it), that waits for the actor's process to end and then removes every
container labelled with that process as its owner on this host, the same rule `verifier gc` uses.

    python -P verifier/cluster/lifeline.py PID START_TICKS
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

#: How often the lifeline looks at its process.
PERIOD_S = 0.5
#: How long it keeps trying to reach an engine that is away.
SWEEP_TIMEOUT_S = 60.0


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a pid from its reuse); None: gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat.rpartition(b")")[2].split()
    if fields[0] == b"Z":  # a zombie: dead, only not reaped yet
        return None
    return int(fields[19])


def spawn(pid: int) -> None:
    """Start a lifeline for `pid` (normally this process), detached from it."""
    ticks = start_ticks(pid)
    if ticks is None:
        raise RuntimeError(f"process {pid} is not running")
    # Run as a file (-P: its folder stays off sys.path), not with -m: importing the verifier
    # package would triple the memory a lifeline holds while it waits.
    child = subprocess.Popen(
        [sys.executable, "-P", os.path.abspath(__file__), str(pid), str(ticks)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    child.wait()  # the intermediate process exits at once; its child is the lifeline


def sweep(pid: int, timeout: float = SWEEP_TIMEOUT_S) -> int:
    """Remove every container of ours owned by `pid` on this host; returns how many were removed."""
    from verifier.sandbox.gc import sweep as sweep_labelled
    from verifier.sandbox.hardening import LABEL_OWNER_HOST, LABEL_OWNER_PID

    owner = (f"{LABEL_OWNER_PID}={pid}", f"{LABEL_OWNER_HOST}={socket.gethostname()}")
    # `verifier gc` on this node removes what is left after the timeout.
    return len(sweep_labelled(owner, timeout_s=timeout, pause_s=1.0))


def main(argv: list[str]) -> int:
    pid, ticks = int(argv[0]), int(argv[1])
    if os.fork() > 0:  # detach: the lifeline must not be a child of the process it watches
        os._exit(0)
    while start_ticks(pid) == ticks:
        time.sleep(PERIOD_S)
    sweep(pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
