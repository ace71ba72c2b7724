from solution import History


def test_forward():
    h = History()
    for e in "abc":
        h.record(e)
    assert list(h) == ["a", "b", "c"]


def test_newest_first():
    h = History()
    for e in "abc":
        h.record(e)
    assert list(reversed(h)) == ["c", "b", "a"]
