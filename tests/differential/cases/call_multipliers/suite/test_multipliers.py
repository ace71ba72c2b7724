from solution import make_multipliers


def test_count():
    assert len(make_multipliers(4)) == 4


def test_each_multiplier_keeps_its_factor():
    assert [m(2) for m in make_multipliers(4)] == [0, 2, 4, 6]
