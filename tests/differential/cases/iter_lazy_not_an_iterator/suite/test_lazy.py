from collections.abc import Iterator

from solution import lazy_squares


def test_values():
    assert list(lazy_squares([1, 2, 3])) == [1, 4, 9]


def test_returns_an_iterator():
    assert isinstance(lazy_squares([1]), Iterator)
