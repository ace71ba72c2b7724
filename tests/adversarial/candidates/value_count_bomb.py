# expect: output_limit
# technique: a reply frame within the byte limit that decodes into millions of values (decoder memory exhaustion)
import json
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
    payload = b'{"value":["L",[' + b"0," * 1_500_000 + b'0]]}'
    os.write(_rpc_fd(), len(payload).to_bytes(4, "big") + payload)
    import time

    time.sleep(60)
