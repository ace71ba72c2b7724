# expect: passed
# technique: (honest) special methods outside the old fixed list: __trunc__, __floor__, __ceil__, __round__, __fspath__, __bytes__, __length_hint__, 3-argument __pow__, __delattr__, __match_args__, weak references, __missing__, __reversed__ and an __ne__-free __eq__-free record
import os


class Amount:
    __match_args__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __float__(self):
        return float(self.x)

    def __trunc__(self):
        return 7

    def __floor__(self):
        return 5

    def __ceil__(self):
        return 6

    def __round__(self, ndigits=None):
        return 4 if ndigits is None else ("rounded", ndigits)

    def __pow__(self, other, mod=None):
        return ("pow", other, mod)

    def __bytes__(self):
        return b"amount"

    def __length_hint__(self):
        return 12


class Where(os.PathLike):
    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


class Defaults(dict):
    def __missing__(self, key):
        return f"default {key}"


class Countdown:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.n - i


def amount(x):
    return Amount(x)


def where(p):
    return Where(p)


def defaults():
    return Defaults(a=1)


def countdown(n):
    return Countdown(n)
