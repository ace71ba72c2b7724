# expect: output_limit
# technique: writes its own reply frame on the call socket: a 60 MB header, then a flood of tiny values
import os
import stat


def _rpc_fd():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                return fd
        except OSError:
            continue
    raise RuntimeError("no socket")


def find_duplicates(values):
    fd = _rpc_fd()
    size = 60 * 1024 * 1024
    os.write(fd, size.to_bytes(4, "big"))
    chunk = b"[" + b"[]," * 100_000
    sent = 0
    while sent < size:
        sent += os.write(fd, chunk)
    return []
