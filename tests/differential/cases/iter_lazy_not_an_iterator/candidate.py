class _Squares:
    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return (x * x for x in self.xs)


def lazy_squares(xs):
    return _Squares(xs)
