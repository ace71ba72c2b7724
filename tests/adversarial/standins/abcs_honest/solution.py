# expect: passed
# technique: (honest) a type that registers with or inherits the standard library's abstract classes (Mapping, numbers.Real, MutableSequence) is one through its handle too
import collections.abc
import numbers


class Table(collections.abc.Mapping):
    def __init__(self, data):
        self.data = dict(data)

    def __getitem__(self, key):
        return self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


class Meters:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return float(self.v)


numbers.Real.register(Meters)


class Plain:
    pass


def table(data):
    return Table(data)


def meters(v):
    return Meters(v)


def plain():
    return Plain()


class Row(Table):
    pass


def kinds():
    return [Table, Row, Plain]
