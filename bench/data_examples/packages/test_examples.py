"""The dataframe task (examples/dataframes/task.md) checked on fixed examples, no Hypothesis: the
same 4 tests and the same inputs as ../plain/test_examples.py on plain Python data, so that the
pair does the same work but for the libraries (bench/data_preload.py)."""

import numpy as np
import pandas as pd
from solution import revenue_by_region, zscores


def frame(rows):
    return pd.DataFrame(rows, columns=["region", "units", "price"]).astype({"units": "int64", "price": "float64"})


def test_worked_example():
    sales = frame([("north", 2, 10.0), ("south", 1, 5.0), ("north", 1, 1.0)])
    expected = pd.DataFrame({"region": pd.Series(["north", "south"], dtype=object), "revenue": [21.0, 5.0]})
    pd.testing.assert_frame_equal(revenue_by_region(sales), expected)


def test_ties_by_region_name_and_the_input_unchanged():
    sales = frame([("west", 1, 2.0), ("east", 2, 1.0), ("north", 4, 0.5), ("south", 3, 9.99)])
    before = sales.copy()
    got = revenue_by_region(sales)
    assert list(got["region"]) == ["south", "east", "north", "west"]
    pd.testing.assert_frame_equal(sales, before)


def test_zscores():
    got = zscores(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(got, [-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865], rtol=1e-9)


def test_zscores_of_equal_values_are_zero():
    got = zscores(np.array([5.0, 5.0, 5.0]))
    assert got.dtype == np.float64 and not got.any()
