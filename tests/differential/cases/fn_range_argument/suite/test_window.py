from solution import window_sums


def test_list():
    assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]


def test_accepts_any_iterable():
    assert window_sums(range(5), 3) == [3, 6, 9]
