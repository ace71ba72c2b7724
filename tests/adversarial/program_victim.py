"""A correct program that looks around: what an earlier program (or case) left must not be there.
Prints its answer only when it finds nothing; otherwise names what it found (a wrong answer)."""

import ctypes
import errno
import os
import sys

data = sys.stdin.read().split()
found = []
for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
    try:
        found += [f"{top}/{e}" for e in os.listdir(top) if e != "candidate"]
    except FileNotFoundError:  # gVisor has no /dev/mqueue; there no candidate can make a queue
        pass
    except OSError as exc:
        found.append(f"{top}: {exc.__class__.__name__}")
for table, get in (("shm", "shmget"), ("msg", "msgget"), ("sem", "semget")):
    try:
        with open(f"/proc/sysvipc/{table}") as fh:
            found += fh.read().splitlines()[1:]
    except FileNotFoundError:  # gVisor lists none: ids grow, so a new object's id counts the ones before it
        libc = ctypes.CDLL(None, use_errno=True)
        args = (0, ctypes.c_size_t(1), 0o1600) if table == "shm" else (0, 1, 0o1600) if table == "sem" else (0, 0o1600)
        top = getattr(libc, get)(*args)
        if top < 0:
            found.append(f"no room for a new {table} object")
            continue
        (libc.semctl(top, 0, 0, None) if table == "sem" else getattr(libc, f"{table}ctl")(top, 0, None))
        for ident in range(top):
            buf = ctypes.create_string_buffer(512)
            ok = (libc.semctl(ident, 0, 2, buf) if table == "sem" else getattr(libc, f"{table}ctl")(ident, 2, buf)) == 0
            if ok or ctypes.get_errno() != errno.EINVAL:
                found.append(f"{table} id {ident}")
me, uid = os.getpid(), os.getuid()
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != me:
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] != "X":
                found.append(f"process {entry} {fields['Name'].strip()} {fields['State'].split()[0]}")
        except (OSError, KeyError, ValueError):
            pass
print(f"LEFTOVER {found}" if found else sum(map(int, data[1:])))
