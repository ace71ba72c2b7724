"""The dataframe example's suite (examples/dataframes/suite) on plain Python data, with no
packages: the baseline of bench/environment_cost.py. Same task, same number of tests and of
Hypothesis examples; rows are dicts and arrays are lists."""

import math
import statistics

from hypothesis import given
from hypothesis import strategies as st
from solution import revenue_by_region, zscores

REGIONS = ["north", "south", "east", "west"]

rows = st.lists(
    st.fixed_dictionaries(
        {
            "region": st.sampled_from(REGIONS),
            "units": st.integers(0, 50),
            "price": st.sampled_from([0.5, 1.25, 2.0, 9.99, 100.0]),
        }
    ),
    max_size=12,
)


def expected_revenue(sales):
    totals = {}
    for row in sales:
        totals[row["region"]] = totals.get(row["region"], 0.0) + row["units"] * row["price"]
    return sorted(({"region": r, "revenue": v} for r, v in totals.items()), key=lambda d: (-d["revenue"], d["region"]))


def test_worked_example():
    sales = [
        {"region": "north", "units": 2, "price": 10.0},
        {"region": "south", "units": 1, "price": 5.0},
        {"region": "north", "units": 1, "price": 1.0},
    ]
    assert revenue_by_region(sales) == [{"region": "north", "revenue": 21.0}, {"region": "south", "revenue": 5.0}]


@given(rows)
def test_revenue_matches_the_reference(sales):
    got = revenue_by_region(sales)
    want = expected_revenue(sales)
    assert [d["region"] for d in got] == [d["region"] for d in want]
    assert all(math.isclose(a["revenue"], b["revenue"]) for a, b in zip(got, want, strict=True))


@given(rows)
def test_the_input_rows_are_not_changed(sales):
    before = [dict(row) for row in sales]
    revenue_by_region(sales)
    assert sales == before


@given(st.lists(st.floats(-1e6, 1e6), max_size=20))
def test_zscores(values):
    got = zscores(values)
    std = statistics.pstdev(values) if values else 0.0
    want = (
        [(v - statistics.fmean(values)) / std for v in values] if len(values) > 1 and std > 0 else [0.0] * len(values)
    )
    assert len(got) == len(want) and all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(got, want, strict=True)
    )
