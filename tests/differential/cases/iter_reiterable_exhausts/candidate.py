class Span:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi
        self._it = iter(range(lo, hi))

    def __iter__(self):
        return self._it

    def __contains__(self, x):
        return self.lo <= x < self.hi
