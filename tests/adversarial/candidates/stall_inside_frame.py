# expect: timeout
# technique: sends one byte of a reply frame's header and stalls, so a receive without a deadline would hang the run
import os
import stat
import time


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
    os.write(_rpc_fd(), b"\x00")
    time.sleep(3600)
