import collections.abc

from solution import Frozen, frozen_class


def test_the_class_is_not_mutable():
    assert issubclass(Frozen, collections.abc.Mapping)
    assert not issubclass(Frozen, collections.abc.MutableMapping)


def test_the_class_a_call_returns_is_not_mutable():
    cls = frozen_class()
    assert issubclass(cls, collections.abc.Mapping)
    assert not issubclass(cls, collections.abc.MutableMapping)
