"""A correct candidate that looks around: what an earlier candidate left must not be there.

It passes on its own. Run after an attacker in a reused sandbox, it must pass the same way.
"""

import os
import resource

LIMITS = (
    "RLIMIT_AS",
    "RLIMIT_CPU",
    "RLIMIT_DATA",
    "RLIMIT_STACK",
    "RLIMIT_NOFILE",
    "RLIMIT_NPROC",
    "RLIMIT_FSIZE",
    "RLIMIT_MEMLOCK",
    "RLIMIT_MSGQUEUE",
)


def leftovers():
    found = {}
    for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
        try:
            found[top] = sorted(e for e in os.listdir(top) if not (top == "/tmp" and e == "candidate"))
        except OSError as exc:
            found[top] = [f"unreadable: {exc.__class__.__name__}"]
    for table in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{table}") as fh:
            found[table] = fh.read().splitlines()[1:]
    me, uid = os.getpid(), os.getuid()
    others = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open(f"/proc/{entry}/status") as fh:
                    fields = dict(line.split(":", 1) for line in fh if ":" in line)
                if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in "ZX":
                    others.append(entry)
            except (OSError, KeyError, ValueError):
                pass
    found["processes"] = others
    with open("/proc/net/tcp") as fh:
        found["tcp"] = [ln for ln in fh.read().splitlines()[1:] if ln.split()[3] == "0A"]  # listening
    return found


def settings():
    out = {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS}
    out["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    out["sched"] = os.sched_getscheduler(0)
    with open("/proc/self/oom_score_adj") as fh:
        out["oom_score_adj"] = int(fh.read())
    print(sorted(out.items()))  # the host compares this line with the victim's run on its own
    return out


def allocate(mib):
    block = bytearray(mib << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return len(block) >> 20


def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total
