# expect: failed
# technique: setuid, unshare and mount through ctypes
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
for attempt in (
    lambda: os.setuid(0),
    lambda: libc.unshare(0x10000000),  # CLONE_NEWUSER
    lambda: libc.mount(b"none", b"/mnt", b"tmpfs", 0, None),
    lambda: libc.ptrace(16, 1, 0, 0),  # PTRACE_ATTACH to PID 1 (the trusted side)
):
    try:
        attempt()
    except Exception:
        pass


def find_duplicates(values):
    return []
