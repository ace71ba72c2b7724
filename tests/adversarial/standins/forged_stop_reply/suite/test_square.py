from solution import square


def test_squares():
    assert all(map(lambda k: square(k) == k * k, range(5)))
