# expect: failed oom
# technique: unbounded recursion to a crash
import sys

sys.setrecursionlimit(10**8)


def find_duplicates(values, depth=0):
    return find_duplicates(values, depth + 1)
