from solution import Lines


def test_lines():
    assert list(Lines("a\nb")) == ["a", "b"]


def test_iter_returns_the_same_object():
    it = Lines("x")
    assert iter(it) is it
