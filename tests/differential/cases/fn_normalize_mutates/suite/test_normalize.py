import copy

from solution import normalize


def test_scales_to_unit_sum():
    assert normalize([1, 1, 2]) == [0.25, 0.25, 0.5]


def test_does_not_touch_its_input():
    data = [3, 1, 2]
    before = copy.deepcopy(data)
    normalize(data)
    assert data == before


def test_nested_input_untouched():
    rows = {"a": [2, 2]}
    normalize(rows["a"])
    assert rows == {"a": [2, 2]}
