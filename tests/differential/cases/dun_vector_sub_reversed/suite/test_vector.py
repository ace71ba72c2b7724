from solution import Vector


def test_add_and_subtract():
    v = Vector(1, 2) + Vector(3, 4)
    assert (v.x, v.y) == (4, 6)
    w = Vector(5, 5) - Vector(1, 2)
    assert (w.x, w.y) == (4, 3)


def test_scale_both_sides():
    a, b = Vector(1, 2) * 3, 2 * Vector(1, 2)
    assert (a.x, a.y, b.x, b.y) == (3, 6, 2, 4)


def test_negate_and_abs():
    n = -Vector(3, -4)
    assert (n.x, n.y) == (-3, 4)
    assert abs(Vector(3, 4)) == 5.0
