from solution import Span


def test_iterates_twice():
    s = Span(1, 4)
    assert list(s) == [1, 2, 3]
    assert list(s) == [1, 2, 3]


def test_sum_and_membership():
    s = Span(0, 5)
    assert sum(s) == 10
    assert 4 in s and 5 not in s
