"""Processes as /proc shows them: the one reader the zygote's reset and the trusted server's
own check share; /proc files read as bytes (`read_bytes`, also for the SysV IPC lists)."""

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
            text = read_bytes(f"/proc/{entry}/status")
        except OSError:
            continue
        state, owner = status_field(text, b"State"), status_field(text, b"Uid")
        if state is None or owner is None or not owner.isdigit() or int(owner) != uid:
            continue
        if state == b"Z" if zombies else state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def read_bytes(path: str) -> bytes:
    """A /proc file's bytes, read with plain descriptors (no file object, no text codec: this runs
    in processes just forked, where every object touched costs a page copy)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def status_field(status: bytes, name: bytes) -> bytes | None:
    """The first word of field `name` of a /proc/PID/status text (its lines are "Name:\tvalue..."),
    or None. Found by searching, not by parsing every line: this runs for every process, at
    every reset."""
    at = status.find(b"\n" + name + b":")
    if at < 0:
        return None
    words = status[at + len(name) + 2 : status.find(b"\n", at + 1)].split()
    return words[0] if words else None
