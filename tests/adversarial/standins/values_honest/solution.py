# expect: passed
# technique: (honest) instances of subclasses of immutable builtins (a namedtuple, IntEnum and StrEnum members, str/int/float/bytes/tuple/frozenset subclasses): C code reads them as the builtin value they are (json, %, +, struct, hashlib, dict keys, isinstance) and their own attributes and methods are the candidate's, as plain pytest sees them
import enum
from collections import namedtuple

Point = namedtuple("Point", "x y")


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2


class Perm(enum.IntFlag):
    R = 4
    W = 2


class Mode(enum.StrEnum):
    READ = "r"
    WRITE = "w"


class Name(str):
    def __new__(cls, text, lang="en"):
        made = super().__new__(cls, text)
        made.lang = lang
        return made

    def shout(self):
        return self.upper() + "!"


class Meters(float):
    def feet(self):
        return self * 3.28084


class Count(int):
    pass


class Blob(bytes):
    def size(self):
        return len(self)


class Pair(tuple):
    def swapped(self):
        return Pair((self[1], self[0]))


class Tags(frozenset):
    pass


def point(x, y):
    return Point(x, y)


def color(n):
    return Color(n)


def perm(n):
    return Perm(n)


def mode(text):
    return Mode(text)


def name(text):
    return Name(text, lang="fr")


def meters(x):
    return Meters(x)


def count(n):
    return Count(n)


def blob(data):
    return Blob(data)


def pair(a, b):
    return Pair((a, b))


def tags(*names):
    return Tags(names)


def points():
    return [Point(1, 2), Point(3, 4)]


def is_point(p):
    return type(p) is Point and p.x + p.y


def relabel(n, lang):
    n.lang = lang
    return n.lang


ORIGIN = Point(0, 0)
DEFAULT = Color.RED
GREETING = Name("hi")
