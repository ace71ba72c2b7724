# expect: passed
# technique: keeps state across cases (files, a child, its environment), answers wrong when it finds any
import os
import sys
import time

data = sys.stdin.read().split()
answer = sum(map(int, data[1:]))
found = []
for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
    try:
        found += [f"{top}/{e}" for e in os.listdir(top) if e != "candidate"]
    except OSError:
        pass
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
if "REMEMBER" in os.environ:
    found.append("environment")
for top in ("/tmp", "/dev/shm"):
    try:
        with open(f"{top}/seen-{len(data)}", "w") as fh:
            fh.write(" ".join(data))
    except OSError:
        pass
os.environ["REMEMBER"] = "1"
if os.fork() == 0:  # a child that would still be there for the next case
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # a daemon: off the case's pipes, so the case ends without it
        os.dup2(null, fd)
    time.sleep(60)
    os._exit(0)
print(f"LEAK {found}" if found else answer)
