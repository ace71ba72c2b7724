"""A child the zygote forked becomes a candidate process: its uid, no capability, seccomp under gVisor."""

from __future__ import annotations

import os
import signal

from .libc import PR_SET_PDEATHSIG, prctl
from .privileges import become
from .protocol import CANDIDATE_UID
from .seccomp import gvisor_guard


def enter_candidate(*, gvisor: bool) -> None:
    """In a freshly forked child: become the candidate's uid with no capability, die with the
    zygote, and `arm_candidate`."""
    become(CANDIDATE_UID)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    arm_candidate(gvisor=gvisor)


def arm_candidate(*, gvisor: bool) -> None:
    """In a process of the candidate's uid, just before it takes a job's files: be the first the
    kernel kills under memory pressure, and under gVisor get `gvisor_guard`."""
    if gvisor:
        try:
            gvisor_guard()
        except (OSError, KeyError):
            os._exit(70)  # never run the candidate without it
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
