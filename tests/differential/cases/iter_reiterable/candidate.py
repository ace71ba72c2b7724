class Span:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        n = self.lo
        while n < self.hi:
            yield n
            n += 1

    def __contains__(self, x):
        return self.lo <= x < self.hi
