"""The reset of the candidate side: the sweeper kills, wipes and removes IPC objects; the zygote's checks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from typing import Any

from .procfs import processes_of
from .protocol import CANDIDATE_UID, CANDIDATE_WRITABLE, SCRATCH_DIR
from .sysv_ipc import remove_ipc

#: How long a reset may keep killing before it declares a process that would not die.
RESET_BUDGET_S = 2.0
#: A reset reports within this time or counts as failed.
RESET_TIMEOUT_S = 10.0
#: How long after the kill a reset waits for the candidate's zombies to be reaped (reaper.py).
ZOMBIE_GRACE_S = 0.5


def candidate_processes(me: int, *, zombies: bool = False) -> list[int]:
    """Live processes of the candidate's uid other than `me` (its zombies with zombies=True)."""
    return processes_of(CANDIDATE_UID, me, zombies=zombies)


def zombies_left(me: int) -> int:
    """The zombies of the candidate's uid still there after ZOMBIE_GRACE_S. Their parent (this
    zygote, or under gVisor the trusted server, PID 1) reaps each as it ends (reaper.py), so one
    that stays has a parent that does not: a later candidate could read its name, pid and number."""
    deadline = time.monotonic() + ZOMBIE_GRACE_S
    while True:
        found = candidate_processes(me, zombies=True)
        if not found or time.monotonic() >= deadline:
            return len(found)
        time.sleep(0.002)


def _wipe() -> int:
    """Remove everything in the candidate's writable places; the number of entries left."""
    left = 0
    for top in CANDIDATE_WRITABLE:
        try:
            entries = os.listdir(top)
        except FileNotFoundError:
            continue
        except OSError:
            left += 1  # e.g. the candidate made its scratch dir unreadable and we could not undo it
            continue
        for name in entries:
            path = os.path.join(top, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    os.chmod(path, 0o700)
                    for root, dirs, _files in os.walk(path):  # undo chmod 000 inside the tree
                        for d in dirs:
                            os.chmod(os.path.join(root, d), 0o700)
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                left += 1
    return left


def sweep(report_fd: int, ipc_floors: dict[str, int]) -> None:
    """In a child that became the candidate's uid: kill every candidate process, wipe, report."""
    survivors: list[int] = []
    me = os.getpid()
    deadline = time.monotonic() + RESET_BUDGET_S
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # every process of our uid except ourselves
        except ProcessLookupError:
            pass
        survivors = candidate_processes(me)
        # A killed process takes a moment to tear down its memory: give it that moment,
        # but a process that keeps coming back (a fork loop) fails the reset.
        if not survivors or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    try:
        os.chmod(SCRATCH_DIR, 0o700)  # the candidate owns its scratch root and may have changed its mode
    except OSError:
        pass
    report: dict[str, Any] = {"survivors": len(survivors), "left_files": _wipe(), "left_ipc": remove_ipc(ipc_floors)}
    os.write(report_fd, json.dumps({**report, "ipc_floors": ipc_floors}).encode())


def kill_candidates_from_here() -> None:
    """SIGKILL every candidate process from the zygote itself (CAP_KILL), round after round,
    without reaping: the dead keep their pid slots as zombies, so a fork bomb cannot refill the
    table while it is being emptied. Used only when the sweeper cannot be forked."""
    deadline = time.monotonic() + RESET_BUDGET_S
    me = os.getpid()
    while time.monotonic() < deadline:
        found = candidate_processes(me)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.001)
