"""A correct candidate that looks around: what an earlier candidate left must not be there.

It passes on its own. Run after an attacker in a reused sandbox, it must pass the same way.
"""

import ctypes
import errno
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


_LIBC = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT, IPC_RMID, IPC_STAT = 0, 0o1000, 0, 2


def _sysv_ctl(table, ident, cmd, buf):
    if table == "sem":
        return _LIBC.semctl(ident, 0, cmd, buf)
    return (_LIBC.shmctl if table == "shm" else _LIBC.msgctl)(ident, cmd, buf)


def _sysv_by_id(table):
    """Where the kernel keeps no /proc/sysvipc (gVisor): ids are handed out in increasing order, so
    every object there is has an id below a new object's; ask about each of them."""
    if table == "shm":
        top = _LIBC.shmget(IPC_PRIVATE, ctypes.c_size_t(1), IPC_CREAT | 0o600)
    elif table == "sem":
        top = _LIBC.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)
    else:
        top = _LIBC.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    if top < 0:
        return [f"no room for a new object: {errno.errorcode.get(ctypes.get_errno())}"]
    _sysv_ctl(table, top, IPC_RMID, None)
    buf = ctypes.create_string_buffer(512)
    found = []
    for ident in range(top):
        if _sysv_ctl(table, ident, IPC_STAT, buf) == 0 or ctypes.get_errno() != errno.EINVAL:
            found.append(f"id {ident}")
    return found


def leftovers():
    found = {}
    for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
        try:
            found[top] = sorted(e for e in os.listdir(top) if not (top == "/tmp" and e == "candidate"))
        except FileNotFoundError:
            found[top] = []  # gVisor has no /dev/mqueue; there no candidate can make a queue (probe.py)
        except OSError as exc:
            found[top] = [f"unreadable: {exc.__class__.__name__}"]
    for table in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{table}") as fh:
                found[table] = fh.read().splitlines()[1:]
        except FileNotFoundError:
            found[table] = _sysv_by_id(table)
    me, uid = os.getpid(), os.getuid()
    others, zombies = [], []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open(f"/proc/{entry}/status") as fh:
                    fields = dict(line.split(":", 1) for line in fh if ":" in line)
                if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in "ZX":
                    others.append(entry)
                elif int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] == "Z":
                    zombies.append(fields["Name"].strip())  # a name, pid and number readable here
            except (OSError, KeyError, ValueError):
                pass
    found["processes"] = others
    found["zombies"] = zombies
    with open("/proc/net/tcp") as fh:
        found["tcp"] = [ln for ln in fh.read().splitlines()[1:] if ln.split()[3] == "0A"]  # listening
    return found


def descriptors():
    """What this process holds open beyond stdin, stdout and stderr: the kind of each (a
    descriptor of the zygote's, of a sweeper's or of an earlier process would show here)."""
    targets = []
    for entry in os.listdir("/proc/self/fd"):
        if int(entry) > 2:
            try:
                targets.append(os.readlink(f"/proc/self/fd/{entry}"))
            except FileNotFoundError:  # the descriptor listdir itself had open
                continue
    return sorted(t.split(":")[0] if ":" in t else t for t in targets)


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
