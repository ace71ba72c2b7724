import collections.abc
import numbers

from solution import Meters, Plain, Table, kinds, meters, plain, table


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


def test_classes():
    assert issubclass(Table, collections.abc.Mapping) and issubclass(Table, collections.abc.Sized)
    assert not issubclass(Table, collections.abc.MutableMapping)
    assert issubclass(Meters, numbers.Real)
    assert not issubclass(Plain, collections.abc.Iterable) and not issubclass(Plain, numbers.Number)
    assert isinstance(table({}), Table) and not isinstance(plain(), Table)


def test_classes_a_call_returns():
    table_class, row_class, plain_class = kinds()
    assert issubclass(row_class, collections.abc.Mapping) and issubclass(row_class, table_class)
    assert not issubclass(plain_class, collections.abc.Mapping) and not issubclass(table_class, row_class)


def test_classes_a_call_returns_in_a_later_process():
    # the classes of the test before are registered with Mapping too: asking about these must
    # not reach that test's candidate process, which is gone
    table_class, row_class, plain_class = kinds()
    assert issubclass(row_class, collections.abc.Mapping) and not issubclass(plain_class, collections.abc.Sized)
    assert issubclass(row_class, table_class) and isinstance(table({}), collections.abc.Mapping)
