# expect: failed
# plain: failed
# technique: subclasses of immutable builtins whose own methods (or an instance attribute) answer differently from the builtin value they hold: a stand-in that answered with the builtin's methods on a copy of the value (len, iteration, items, str(), int(), upper()) would pass where the real object fails
from collections import namedtuple


class Name(str):
    def upper(self):
        return "WRONG"

    def __str__(self):
        return "WRONG"


class Shadowed(str):
    pass


class P(namedtuple("P", "x y")):
    def __len__(self):
        return 3

    def __iter__(self):
        return iter([7, 7])

    def __getitem__(self, i):
        return 7

    def __contains__(self, item):
        return False


class Num(int):
    def __int__(self):
        return 99


def name():
    return Name("ab")


def shadowed():
    s = Shadowed("ab")
    s.upper = lambda: "WRONG"
    return s


def point():
    return P(1, 2)


def num():
    return Num(1)


CONSTANT = Name("ab")
