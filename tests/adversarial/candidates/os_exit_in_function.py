# expect: failed
# technique: os._exit(0) inside the function
import os


def find_duplicates(values):
    os._exit(0)
