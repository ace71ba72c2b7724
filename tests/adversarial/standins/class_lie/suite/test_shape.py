from solution import make


def test_not_an_int():
    assert not isinstance(make(), int)
