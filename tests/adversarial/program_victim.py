"""A correct program that looks around: what an earlier program (or case) left must not be there.
Prints its answer only when it finds nothing; otherwise names what it found (a wrong answer)."""

import os
import sys

data = sys.stdin.read().split()
found = []
for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
    try:
        found += [f"{top}/{e}" for e in os.listdir(top) if e != "candidate"]
    except OSError as exc:
        found.append(f"{top}: {exc.__class__.__name__}")
for table in ("shm", "msg", "sem"):
    with open(f"/proc/sysvipc/{table}") as fh:
        found += fh.read().splitlines()[1:]
me, uid = os.getpid(), os.getuid()
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != me:
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in "ZX":
                found.append(f"process {entry}")
        except (OSError, KeyError, ValueError):
            pass
print(f"LEFTOVER {found}" if found else sum(map(int, data[1:])))
