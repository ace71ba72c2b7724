import collections.abc
import numbers

from solution import meters, plain, table


def test_mapping():
    t = table({"a": 1, "b": 2})
    assert isinstance(t, collections.abc.Mapping)
    assert not isinstance(t, collections.abc.MutableMapping)
    assert dict(t) == {"a": 1, "b": 2}
    assert sorted(t.keys()) == ["a", "b"]
    assert t.get("c", 3) == 3


def test_numbers():
    m = meters(2)
    assert isinstance(m, numbers.Real) and isinstance(m, numbers.Number)
    assert not isinstance(m, numbers.Integral)
    assert float(m) == 2.0


def test_plain_is_nothing():
    p = plain()
    for abc in (collections.abc.Mapping, collections.abc.Sequence, numbers.Number, collections.abc.Iterable):
        assert not isinstance(p, abc)
    assert isinstance(p, collections.abc.Hashable)
