"""The dataframe task (task.md): results compared with pandas' and numpy's own testing helpers,
inputs drawn with Hypothesis' numpy and pandas strategies. The candidate's frames and arrays
cross the sandbox's boundary as data: what arrives here is a real DataFrame / ndarray."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.extra import pandas as hpd
from solution import revenue_by_region, zscores

REGIONS = ["north", "south", "east", "west"]

sales_frames = hpd.data_frames(
    columns=[
        hpd.column("region", elements=st.sampled_from(REGIONS), dtype=object),
        hpd.column("units", elements=st.integers(0, 50), dtype="int64"),
        hpd.column("price", elements=st.sampled_from([0.5, 1.25, 2.0, 9.99, 100.0]), dtype="float64"),
    ],
    index=hpd.range_indexes(max_size=12),
)


def expected_revenue(sales: pd.DataFrame) -> pd.DataFrame:
    revenue = (sales["units"] * sales["price"]).groupby(sales["region"]).sum()
    out = pd.DataFrame({"region": revenue.index.astype(object), "revenue": revenue.to_numpy(dtype="float64")})
    out = out.sort_values(["revenue", "region"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def test_worked_example():
    sales = pd.DataFrame({"region": ["north", "south", "north"], "units": [2, 1, 1], "price": [10.0, 5.0, 1.0]})
    expected = pd.DataFrame({"region": pd.Series(["north", "south"], dtype=object), "revenue": [21.0, 5.0]})
    pd.testing.assert_frame_equal(revenue_by_region(sales), expected)


@given(sales_frames)
def test_revenue_matches_the_reference(sales):
    got = revenue_by_region(sales)
    assert isinstance(got, pd.DataFrame)
    assert list(got.columns) == ["region", "revenue"]
    pd.testing.assert_frame_equal(got, expected_revenue(sales), check_dtype=False, check_index_type=False)


@given(sales_frames)
def test_the_input_frame_is_not_changed(sales):
    before = sales.copy()
    revenue_by_region(sales)
    pd.testing.assert_frame_equal(sales, before)


@given(hnp.arrays(np.float64, st.integers(0, 20), elements=st.floats(-1e6, 1e6)))
def test_zscores(values):
    got = zscores(values)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == values.shape
    std = values.std() if values.size else 0.0
    expected = (values - values.mean()) / std if values.size > 1 and std > 0 else np.zeros_like(values)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
