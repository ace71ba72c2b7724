# expect: output_limit
# technique: __repr__ and __str__ that answer with 80 MB, and print a flood while doing it
import sys


class Thing:
    def __init__(self, n=0):
        self.n = n

    def next(self):
        return Thing(self.n + 1)

    def value(self):
        return self.n

    def __len__(self):
        return 3

    def __iter__(self):
        return iter([1, 2, 3])

    def __repr__(self):
        sys.stdout.write("x" * 5_000_000)
        return "Thing" * 16_000_000


def make():
    return Thing()
