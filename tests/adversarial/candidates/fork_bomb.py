# expect: failed timeout
# technique: a fork bomb (fork until the pids limit, forever)
import os


def find_duplicates(values):
    while True:
        try:
            os.fork()
        except OSError:
            pass
