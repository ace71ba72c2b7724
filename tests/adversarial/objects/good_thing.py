# expect: passed
# technique: none: a correct object, so the suite itself is known to pass
class Thing:
    def __init__(self, n):
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
        return f"Thing({self.n})"


def make():
    return Thing(0)
