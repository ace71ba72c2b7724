"""Candidate objects through handles: every answer compared here is plain data."""

from solution import make


def test_chain_of_objects():
    thing = make()
    for _ in range(5):
        thing = thing.next()
    assert thing.value() == 5


def test_len():
    assert len(make()) == 3


def test_iteration():
    assert list(make()) == [1, 2, 3]


def test_repr():
    assert repr(make()).startswith("Thing")
