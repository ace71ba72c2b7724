from solution import pairwise


def test_pairs():
    assert list(pairwise([1, 2, 3, 4])) == [(1, 2), (2, 3), (3, 4)]


def test_too_short():
    assert list(pairwise([1])) == []
