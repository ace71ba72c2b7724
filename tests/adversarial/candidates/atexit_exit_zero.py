# expect: failed
import atexit
import os

atexit.register(lambda: os._exit(0))


def find_duplicates(values):
    return []
