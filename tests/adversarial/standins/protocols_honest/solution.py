# expect: passed
# technique: (honest) a plain record has no iteration, length, call or item protocol, and compares by identity
class Record:
    def __init__(self, n):
        self.n = n


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return self.n

    def __len__(self):
        return self.n

    def __iter__(self):
        return iter(range(self.n))


def make(n):
    return Record(n)


def counter():
    return Counter()


def failure(n):
    return ValueError("bad", n)
