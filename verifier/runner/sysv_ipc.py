"""SysV IPC objects (shared memory, semaphores, message queues): removing the ones the candidate made."""

from __future__ import annotations

import ctypes
import errno

from .libc import LIBC
from .procfs import read_bytes

#: Kernel objects that outlive the processes that made them, per IPC namespace.
SYSV_TABLES = {"shm": 0, "sem": 1, "msg": 2}
_IPC_RMID = 0
_IPC_PRIVATE, _IPC_CREAT = 0, 0o1000


def _rmid(kind: int, ident: int) -> int:
    """IPC_RMID of object `ident` of table `kind`: 0 when removed, else the errno."""
    if kind == 1:
        ok = LIBC.semctl(ident, 0, _IPC_RMID, None) == 0
    else:
        ok = (LIBC.shmctl if kind == 0 else LIBC.msgctl)(ident, _IPC_RMID, None) == 0
    return 0 if ok else ctypes.get_errno()


def _new_id(kind: int) -> int:
    """The id of a new private object of table `kind` (removed again at once); -1 when none can be made."""
    if kind == 0:
        ident = LIBC.shmget(_IPC_PRIVATE, ctypes.c_size_t(1), _IPC_CREAT | 0o600)
    elif kind == 1:
        ident = LIBC.semget(_IPC_PRIVATE, 1, _IPC_CREAT | 0o600)
    else:
        ident = LIBC.msgget(_IPC_PRIVATE, _IPC_CREAT | 0o600)
    if ident >= 0:
        _rmid(kind, ident)
    return int(ident)


def remove_ipc(floors: dict[str, int]) -> int:
    """Remove the SysV IPC objects the candidate made (also ones it handed to another uid);
    the number left. Runs as the candidate's uid, which may remove what it created.

    Where the kernel lists them (/proc/sysvipc), from that list. Where it does not (gVisor), by
    id: gVisor hands out ids in increasing order, so every object made since the last reset has
    an id between that reset's new-object id (`floors`, updated here) and a new object's id now.
    (Its SHM_INFO count is no help: it keeps counting removed segments.)
    """
    left = 0
    for table, kind in SYSV_TABLES.items():
        try:
            rows = read_bytes(f"/proc/sysvipc/{table}").splitlines()[1:]
        except FileNotFoundError:
            top = _new_id(kind)
            if top < 0:
                left += 1  # no room for even one more object: the candidate filled the table
                continue
            for ident in range(floors.get(table, -1) + 1, top):
                left += _rmid(kind, ident) not in (0, errno.EINVAL)  # EINVAL: no such id
            floors[table] = top
            continue
        except OSError:
            continue
        for row in rows:
            left += _rmid(kind, int(row.split()[1])) != 0
    return left
