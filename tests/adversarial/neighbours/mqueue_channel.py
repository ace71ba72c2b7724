# technique: a POSIX message queue in /dev/mqueue holding a secret for the next candidate
import ctypes
import os

librt = ctypes.CDLL("librt.so.1", use_errno=True)


def attack():
    fd = librt.mq_open(b"/verifier-secret", os.O_CREAT | os.O_RDWR, 0o666, None)
    if fd >= 0:
        librt.mq_send(fd, b"the answers: [2, 1]", 19, 0)


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
