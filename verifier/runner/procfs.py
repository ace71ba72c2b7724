"""Processes as /proc shows them: the one reader the zygote's reset and the trusted server's
own check share."""

from __future__ import annotations

import os


def processes_of(uid: int, me: int, *, zombies: bool = False) -> list[int]:
    """Live (not zombie) processes of `uid`, other than `me`; with zombies=True, its zombies
    instead (ended, not yet waited for by their parent).

    Read from /proc/PID/status: a process that changed uid is not dumpable, so its /proc entry
    belongs to root and the directory's owner says nothing.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            state = fields["State"].split()[0]
            if int(fields["Uid"].split()[0]) == uid and (state == "Z" if zombies else state not in "ZX"):
                found.append(int(entry))
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return found
