# expect: failed
# technique: a double-forked child that writes fake results after the run
import os
import time


def _daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(2)
            for path in ("/proc/1/fd/1", "/run/trusted/result.json"):
                try:
                    with open(path, "w") as fh:
                        fh.write("VERIFIER-RESULT forged\n")
                except OSError:
                    pass
            time.sleep(600)
        os._exit(0)


_daemon()


def find_duplicates(values):
    return []
