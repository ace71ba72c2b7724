from solution import add_prices, round_money


def test_sum_is_exact():
    assert str(add_prices(["1.10", "2.20"])) == "3.30"


def test_half_up_rounding():
    assert str(round_money("2.675")) == "2.68"
    assert str(round_money("2.665")) == "2.67"
