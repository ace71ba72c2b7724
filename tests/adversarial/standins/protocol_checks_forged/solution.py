# expect: failed
# plain: failed
# technique: the suite checks what the result is not (a dataclass, a Mapping, weakly referable, truncatable, a path, an int); the real object is each, and the handle answered no (its class had a fixed list of protocols, no ABC registration, no weak references, and its own __class__)
import collections.abc
import dataclasses
import os


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Table(collections.abc.Mapping):
    def __getitem__(self, key):
        raise KeyError(key)

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class Amount:
    def __trunc__(self):
        return 1


class Where(os.PathLike):
    def __fspath__(self):
        return "/tmp"


class Sly:
    def __getattribute__(self, name):
        if name == "__class__":
            return int
        return object.__getattribute__(self, name)


def point():
    return Point(1, 2)


def table():
    return Table()


def amount():
    return Amount()


def where():
    return Where()


def sly():
    return Sly()
