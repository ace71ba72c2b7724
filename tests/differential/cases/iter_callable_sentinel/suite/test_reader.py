from solution import Reader


def test_iter_with_a_sentinel():
    r = Reader(b"abcdefg", 3)
    assert list(iter(r.read, b"")) == [b"abc", b"def", b"g"]
