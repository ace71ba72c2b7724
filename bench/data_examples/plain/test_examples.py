"""The dataframe task on plain Python data (rows are dicts, arrays are lists; bench/environment_twin's
candidate) checked on fixed examples: the same 4 tests and inputs as ../packages/test_examples.py."""

import math

from solution import revenue_by_region, zscores


def rows(items):
    return [{"region": r, "units": u, "price": p} for r, u, p in items]


def test_worked_example():
    sales = rows([("north", 2, 10.0), ("south", 1, 5.0), ("north", 1, 1.0)])
    assert revenue_by_region(sales) == [{"region": "north", "revenue": 21.0}, {"region": "south", "revenue": 5.0}]


def test_ties_by_region_name_and_the_input_unchanged():
    sales = rows([("west", 1, 2.0), ("east", 2, 1.0), ("north", 4, 0.5), ("south", 3, 9.99)])
    before = [dict(row) for row in sales]
    got = revenue_by_region(sales)
    assert [d["region"] for d in got] == ["south", "east", "north", "west"]
    assert sales == before


def test_zscores():
    got = zscores([1.0, 2.0, 3.0, 4.0])
    want = [-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865]
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(got, want, strict=True))


def test_zscores_of_equal_values_are_zero():
    assert zscores([5.0, 5.0, 5.0]) == [0.0, 0.0, 0.0]
