from solution import sort_by


def test_default_order():
    assert sort_by([3, 1, 2]) == [1, 2, 3]


def test_with_a_key():
    assert sort_by(["ccc", "a", "bb"], key=len) == ["a", "bb", "ccc"]
