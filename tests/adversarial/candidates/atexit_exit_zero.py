# expect: failed
# technique: an atexit handler that exits 0 after the tests
import atexit
import os

atexit.register(lambda: os._exit(0))


def find_duplicates(values):
    return []
