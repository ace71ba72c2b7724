# expect: failed
import os


def find_duplicates(values):
    os._exit(0)
