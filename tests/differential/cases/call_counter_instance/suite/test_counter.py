from solution import Counter


def test_calls_count():
    c = Counter()
    c()
    assert c(5) == 6
    assert c.count == 6
