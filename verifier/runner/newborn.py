"""A new candidate process's first steps, shared by the two kinds the zygote forks (a call
server, candidate.py; a program, program_exec.py): keep only its own descriptors, then tell
the zygote it is set up. Its own module so that neither imports the zygote (which imports
them): no import circle."""

from __future__ import annotations

import os

#: What a new candidate process writes once set up, just before the candidate's code runs.
READY = b"R"


def say_ready(ready_fd: int) -> None:
    """In a new candidate process, just before the candidate's code runs: tell the zygote the
    set-up worked (see Zygote._start), and close the pipe."""
    os.write(ready_fd, READY)
    os.close(ready_fd)


def keep_only_descriptors(*keep: int) -> None:
    """In a new candidate process: close every descriptor but `keep` (nothing of the zygote's,
    a sweeper's or an earlier process's reaches the candidate's code)."""
    for entry in os.listdir("/proc/self/fd"):
        if int(entry) not in keep:
            try:
                os.close(int(entry))
            except OSError:
                pass  # the one listdir itself had open
