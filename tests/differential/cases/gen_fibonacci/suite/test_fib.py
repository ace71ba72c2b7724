from itertools import islice

from solution import fib


def test_first_ten():
    assert list(islice(fib(), 10)) == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]


def test_next_by_hand():
    g = fib()
    assert [next(g), next(g), next(g), next(g)] == [0, 1, 1, 2]


def test_independent_generators():
    a, b = fib(), fib()
    next(a)
    next(a)
    assert next(b) == 0
