import collections.abc

import pytest
from solution import counter, make


def test_a_record_has_no_protocols():
    r = make(1)
    assert not callable(r)
    assert not isinstance(r, collections.abc.Iterable)
    assert not isinstance(r, collections.abc.Sized)
    assert not isinstance(r, collections.abc.Container)
    with pytest.raises(TypeError):
        len(r)
    with pytest.raises(TypeError):
        iter(r)
    with pytest.raises(TypeError):
        r[0]
    assert r.n == 1
    assert r != 1 and not (r == 1)
    assert r == r
    assert bool(r) is True
    assert {r: 1}[r] == 1
    assert type(r).__name__ == "Record"


def test_a_counter_has_its_protocols():
    c = counter()
    assert callable(c)
    assert isinstance(c, collections.abc.Sized) and isinstance(c, collections.abc.Iterable)
    assert c() == 1 and c() == 2
    assert len(c) == 2
    assert list(c) == [0, 1]
    assert bool(c) is True


def test_copies_and_exception_values():
    import copy

    from solution import failure

    r = make(1)
    twin = copy.copy(r)
    twin.n = 5
    assert r.n == 1 and twin.n == 5
    assert copy.deepcopy(r).n == 1
    assert "n" in dir(r)
    exc = failure(3)
    assert isinstance(exc, ValueError) and exc.args == ("bad", 3)
