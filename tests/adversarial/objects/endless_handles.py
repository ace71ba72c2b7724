# expect: output_limit timeout
# technique: every method returns a new object, forever: the trusted side's table of handles must not grow without bound
class Thing:
    def next(self):
        return Thing()

    def value(self):
        return Thing()

    def __len__(self):
        return 3

    def __iter__(self):
        return iter([Thing() for _ in range(100_000)])

    def __repr__(self):
        return "Thing"


def make():
    return Thing()
