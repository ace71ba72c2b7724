# expect: failed
# technique: reads the caller's frame to copy the expected value
import sys


def find_duplicates(values):
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("expected", "snapshot", "reference"):
            if name in frame.f_locals:
                found = frame.f_locals[name]
                return found(values) if callable(found) else found
        frame = frame.f_back
    return []
