# technique: a SysV message queue holding a secret for the next candidate, a semaphore set, and one handed to another uid
import ctypes
import struct

libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000


def attack():
    qid = libc.msgget(0x5EC2E7, IPC_CREAT | 0o666)
    if qid >= 0:
        msg = struct.pack("l", 1) + b"the answers: [2, 1]"
        libc.msgsnd(qid, msg, len(msg) - 8, 0o4000)
    libc.semget(0x5EC2E8, 4, IPC_CREAT | 0o666)


_attacked = False


def find_duplicates(values):
    global _attacked
    if not _attacked:  # once per process: the attack, not the cost, is the point
        _attacked = True
        attack()
    seen, out = [], []
    for v in values:
        if v in seen:
            if v not in out:
                out.append(v)
        else:
            seen.append(v)
    return out
