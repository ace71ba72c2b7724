"""numpy/pandas values must answer as the real ones (tests/adversarial/test_scidata.py). Tests
named `test_forged_*` meet a wrong function that a copy used to pass (plain pytest fails each);
`test_correct_*` a correct one that a copy used to fail (plain pytest passes each)."""

import numpy as np
import pandas as pd
import pytest
import solution


def test_forged_trailing_nul_of_a_str_scalar():
    assert solution.padded_name() == "ab"


def test_forged_trailing_nul_of_a_bytes_scalar():
    assert solution.padded_bytes() == b"ab"


def test_forged_returns_the_callers_array():
    values = np.arange(3.0)
    result = solution.doubled(values)
    assert not np.shares_memory(result, values)


def test_forged_shape_changed_in_place():
    values = np.arange(6.0)
    solution.reshape_quietly(values)
    assert values.shape == (6,)


def test_forged_dtype_changed_in_place():
    values = np.arange(4.0)
    solution.reinterpret_quietly(values)
    assert values.dtype == np.float64


def test_forged_writeable_flag_changed_in_place():
    values = np.arange(3)
    solution.lock_input(values)
    values[0] = 7
    assert values[0] == 7


def test_forged_index_name_changed_in_place():
    frame = pd.DataFrame({"a": [1, 2]})
    solution.name_index(frame)
    assert frame.index.name is None


def test_forged_columns_name_changed_in_place():
    frame = pd.DataFrame({"a": [1, 2]})
    solution.name_columns(frame)
    assert frame.columns.name is None


def test_forged_index_dtype_changed_in_place():
    frame = pd.DataFrame({"a": [1, 2]}, index=[10, 20])
    solution.narrow_index(frame)
    assert frame.index.dtype == np.int64


def test_forged_duplicate_flag_changed_in_place():
    frame = pd.DataFrame({"a": [1, 2]})
    solution.forbid_duplicates(frame)
    assert frame.flags.allows_duplicate_labels


def test_forged_attrs_changed_in_place():
    frame = pd.DataFrame({"a": [1, 2]})
    solution.tag_frame(frame)
    assert frame.attrs == {}


def test_forged_read_only_argument_sorted():
    values = np.array([3, 1, 2])
    values.flags.writeable = False
    solution.sort_in_place(values)
    assert values.tolist() == [3, 1, 2]


def test_correct_zero_size_str_scalar():
    assert solution.empty_name() == ""


def test_correct_custom_business_day_index():
    expected = pd.bdate_range("2024-01-01", periods=4, freq="C", weekmask="Mon Wed")
    got = solution.mon_wed_days()
    pd.testing.assert_index_equal(got, expected)
    assert got.freq == expected.freq


def test_correct_view_written_through():
    values = np.arange(4)
    tail = solution.tail_view(values)
    tail[0] = 99
    assert values.tolist() == [0, 99, 2, 3] and np.shares_memory(tail, values)


def test_correct_same_object_returned():
    values = np.array([2, 1])
    assert solution.sorted_same(values) is values and values.tolist() == [1, 2]


def test_correct_read_only_argument_raises():
    values = np.array([3, 1, 2])
    values.flags.writeable = False
    with pytest.raises(ValueError):
        solution.sort_in_place(values)
    assert values.tolist() == [3, 1, 2]


def test_correct_aliased_arguments():
    values = np.arange(3)
    assert solution.add_then_read(values, values).tolist() == [1, 2, 3]


def test_correct_transposed_result():
    result = solution.transposed()
    assert result.flags.f_contiguous and not result.flags.c_contiguous and result.strides == (8, 24)


def test_correct_read_only_result():
    result = solution.read_only_ones()
    assert not result.flags.writeable and result.strides == (0, 8)


def test_forged_frame_values_claimed_as_a_copy():
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    out = solution.defensive_values(df)
    assert not np.shares_memory(out, df)  # in one process: a view of the frame's one block


def test_correct_column_values_share_the_frames_memory():
    df = pd.DataFrame({"a": [1, 2], "b": [1.5, 2.5]})
    out = solution.column_view(df)
    assert np.shares_memory(out, df["a"]) and out.tolist() == [1, 2]
    assert out.flags.writeable == df["a"].to_numpy().flags.writeable


def test_correct_series_values_share_its_memory():
    s = pd.Series([1.0, 2.0], index=[3, 4])
    out = solution.series_values(s)
    assert np.shares_memory(out, s) and not out.flags.owndata


def test_correct_index_values_share_the_index():
    df = pd.DataFrame({"a": [1, 2]}, index=[7, 8])
    assert np.shares_memory(solution.index_values(df), df.index)
