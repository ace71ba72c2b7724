"""The reset of the candidate side: the sweeper kills, wipes and removes IPC objects; the zygote's checks.

Before it wipes, the sweeper may read files a program wrote (`fetch`: compare = "none" suites'
`fetch_files`): it is then the candidate's uid, with no capability, and every candidate process is
dead, so the kernel's permissions keep the trusted side's files out of its reach, nothing writes
the files while they are read, and a leftover daemon is gone before the read. The read itself
follows no link (O_NOFOLLOW on every component from "/"), opens nothing but a regular file the
candidate owns (never a FIFO or device: O_NONBLOCK, then fstat), stays under CANDIDATE_DIR, and
reads at most the byte budget.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import shutil
import signal
import stat
import time
from typing import Any

from .procfs import processes_of
from .protocol import CANDIDATE_DIR, CANDIDATE_UID, CANDIDATE_WRITABLE, MAX_FETCH_FILES, MAX_FETCH_PATH, SCRATCH_DIR
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
                            inner = os.path.join(root, d)
                            if not os.path.islink(inner):  # os.walk lists a link to a folder as a folder
                                os.chmod(inner, 0o700)
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                left += 1
    return left


def _open_under(path: str) -> int:
    """An fd of the regular file `path` (relative to CANDIDATE_DIR), opened without following any
    link on the way from "/"; raises OSError (ELOOP: a link; ENOTDIR: a link or file where a folder
    should be) or ValueError with a trusted reason."""
    parts = [*CANDIDATE_DIR.strip("/").split("/"), *path.split("/")]
    if any(part in ("", ".", "..") for part in path.split("/")) or path.startswith("/") or "\0" in path:
        raise ValueError("not a path inside the program's folder")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
        # O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _fetch_one(path: str, room: int) -> dict[str, Any]:
    """The record (protocol.FetchedRecord's fields) of the file `path`, with at most `room` bytes."""
    try:
        fd = _open_under(path)
    except ValueError as exc:
        return {"path": path, "error": str(exc)}
    except FileNotFoundError:
        return {"path": path, "error": "no such file"}
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            return {"path": path, "error": "not fetched: a symbolic link (or a file where a folder should be)"}
        if exc.errno in (errno.EACCES, errno.EPERM):
            return {"path": path, "error": "not fetched: the program's user may not read it"}
        why = errno.errorcode.get(exc.errno or 0, "error")
        return {"path": path, "error": f"not fetched: it could not be opened ({why})"}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return {"path": path, "error": "not fetched: not a regular file"}
        if info.st_uid != CANDIDATE_UID:  # e.g. a hard link to a file the program did not write
            return {"path": path, "error": "not fetched: not a file the program's user owns"}
        if info.st_size > room:
            return {"path": path, "error": f"not fetched: {info.st_size} bytes, over the {room} bytes left for files"}
        data = bytearray()
        while len(data) <= room:
            chunk = os.read(fd, min(1 << 20, room + 1 - len(data)))
            if not chunk:
                break
            data += chunk
        if len(data) > room:  # it grew past its size (nothing of the candidate's runs now: never)
            return {"path": path, "error": f"not fetched: over the {room} bytes left for files"}
        return {"path": path, "b64": base64.b64encode(bytes(data)).decode(), "size": len(data)}
    except OSError:
        return {"path": path, "error": "not fetched: it could not be read"}
    finally:
        os.close(fd)


def fetch(paths: list[str], budget: int) -> list[dict[str, Any]]:
    """The records of the files `paths` (at most MAX_FETCH_FILES, each at most MAX_FETCH_PATH
    characters), with at most `budget` bytes of content in all: a file that would go past it is
    not read and its record says so. Run by the sweeper (the candidate's uid) before it wipes."""
    records: list[dict[str, Any]] = []
    left = budget
    for path in paths[:MAX_FETCH_FILES]:
        if not isinstance(path, str) or len(path) > MAX_FETCH_PATH:
            records.append({"path": str(path)[:MAX_FETCH_PATH], "error": "not a path inside the program's folder"})
            continue
        record = _fetch_one(path, left)
        left -= int(record.get("size", 0))
        records.append(record)
    return records


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def sweep(report_fd: int, ipc_floors: dict[str, int], fetch_order: dict[str, Any] | None = None) -> None:
    """In a child that became the candidate's uid: kill every candidate process, (with
    `fetch_order`: {"paths", "budget", "fd"}) read the files asked for into the fd, wipe, report."""
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
    if fetch_order is not None and not survivors:  # with a survivor the files could still change
        try:
            records = fetch([str(p) for p in fetch_order["paths"]], int(fetch_order["budget"]))
            _write_all(int(fetch_order["fd"]), json.dumps(records).encode())
        except (OSError, ValueError, TypeError, KeyError):
            pass  # the trusted side finds no records and says so
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
