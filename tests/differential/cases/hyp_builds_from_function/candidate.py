class Interval:
    def __init__(self, lo, hi):
        self.lo, self.hi = min(lo, hi), max(lo, hi)

    def length(self):
        return self.hi - self.lo


def make_interval(a, b):
    return Interval(a, b)
