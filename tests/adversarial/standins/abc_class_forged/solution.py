# expect: failed
# plain: failed
# technique: a read-only view the task asks for, written as a MutableMapping: a candidate class (from the module, or returned by a call) answered issubclass(C, MutableMapping) as False
import collections.abc


class Frozen(collections.abc.MutableMapping):
    def __init__(self, data=()):
        self.data = dict(data)

    def __getitem__(self, key):
        return self.data[key]

    def __setitem__(self, key, value):
        self.data[key] = value

    def __delitem__(self, key):
        del self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


def frozen_class():
    return Frozen
