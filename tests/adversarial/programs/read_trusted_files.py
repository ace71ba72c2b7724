# expect: failed
# technique: steals expected outputs and other cases (suite folder, fds, cwd, root, memory, environ of others)
import glob
import os

stolen = []
places = ["/run/trusted/suite/cases/*", "/run/trusted/**", "/proc/[0-9]*/root/run/trusted/suite/cases/*"]
for pattern in places:
    for path in glob.glob(pattern, recursive=True):
        try:
            with open(path) as fh:
                stolen.append(fh.read())
        except OSError:
            pass
me = str(os.getpid())
for pid in os.listdir("/proc"):
    if not pid.isdigit() or pid == me:
        continue
    for what in ("environ", "cmdline", "cwd/cases/1.out", "mem"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as fh:
                stolen.append(fh.read(1 << 16).decode("latin-1"))
        except OSError:
            pass
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            stolen.append(os.read(handle, 1 << 16).decode("latin-1"))
        except OSError:
            pass
        finally:
            os.close(handle)
answers = [s for s in stolen if s.strip().lstrip("-").isdigit()]
print(answers[0] if answers else 0)
