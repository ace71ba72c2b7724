# expect: passed
# technique: each case looks in /proc for a zombie an earlier case named (PR_SET_NAME), then leaves one
import ctypes
import os
import sys

data = sys.stdin.read().split()
seen = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            with open(f"/proc/{entry}/status") as fh:
                name = fh.readline().split(":", 1)[1].strip()
        except (OSError, IndexError):
            continue
        if name.startswith("case-"):
            seen.append(name)
if os.fork() == 0:
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"case-" + data[0].encode(), 0, 0, 0)  # PR_SET_NAME
        os._exit(0)
    os._exit(0)
os.wait()
print(f"SEEN {seen}" if seen else sum(map(int, data[1:])))
