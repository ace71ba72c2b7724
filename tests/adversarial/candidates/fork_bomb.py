# expect: failed timeout
import os


def find_duplicates(values):
    while True:
        try:
            os.fork()
        except OSError:
            pass
