# expect: timeout
# technique: __len__ and __iter__ that never return
from itertools import count


class Thing:
    def __init__(self, n=0):
        self.n = n

    def next(self):
        return Thing(self.n + 1)

    def value(self):
        return self.n

    def __len__(self):
        while True:
            pass

    def __iter__(self):
        return count()

    def __repr__(self):
        return "Thing"


def make():
    return Thing()
