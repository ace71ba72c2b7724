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
                text = fh.read()
        except OSError:
            continue
        state, owner = _field(text, "State"), _field(text, "Uid")
        if state is None or owner is None or not owner.isdigit() or int(owner) != uid:
            continue
        if state == "Z" if zombies else state not in ("Z", "X"):
            found.append(int(entry))
    return found


def _field(status: str, name: str) -> str | None:
    """The first word of field `name` of a /proc/PID/status text (its lines are "Name:\tvalue..."),
    or None. Found by searching, not by parsing every line: this runs for every process, at
    every reset."""
    at = status.find(f"\n{name}:")
    if at < 0:
        return None
    words = status[at + len(name) + 2 : status.find("\n", at + 1)].split()
    return words[0] if words else None
