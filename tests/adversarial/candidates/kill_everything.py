# expect: failed
# technique: kill(-1) and kills every process it can see
import os
import signal


def find_duplicates(values):
    for target in (os.getppid(), 1, -1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    return []
