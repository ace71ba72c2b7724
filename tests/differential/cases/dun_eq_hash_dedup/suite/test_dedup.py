from solution import P


def test_fields():
    assert (P(1, 2).x, P(1, 2).y) == (1, 2)


def test_equal_points_collapse_in_a_set():
    assert len({P(1, 2), P(1, 2), P(2, 1)}) == 2
