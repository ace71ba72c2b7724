# expect: failed
# technique: numpy/pandas values whose copy answers differently from the real one (issue 32 §1):
# trailing NULs of str_/bytes_ scalars, the caller's own array returned, in-place changes of
# shape, dtype, flags, index names and dtype, columns' name, pandas flags and attrs; beside them
# correct functions the copy used to fail (a zero-size str_, a custom business-day index, a view
# written through, a read-only argument, aliased arguments, a transposed or read-only result)
import numpy as np
import pandas as pd

# -- forged: each is wrong, and plain pytest fails its test -----------------------------------


def padded_name():
    return np.str_("ab\x00")  # "ab" expected: the NUL is part of the value


def padded_bytes():
    return np.bytes_(b"ab\x00")


def doubled(values):
    values *= 2  # changes the caller's array and returns it: "returns a new array" is false
    return values


def reshape_quietly(values):
    values.shape = (3, 2)
    return float(values.sum())


def reinterpret_quietly(values):
    values.dtype = np.int64
    return 0


def lock_input(values):
    values.flags.writeable = False
    return int(values[0])


def name_index(frame):
    frame.index.name = "row"
    return len(frame)


def name_columns(frame):
    frame.columns.name = "field"
    return len(frame)


def narrow_index(frame):
    frame.index = frame.index.astype("int32")
    return len(frame)


def forbid_duplicates(frame):
    frame.flags.allows_duplicate_labels = False
    return len(frame)


def tag_frame(frame):
    frame.attrs["source"] = "candidate"
    return len(frame)


def sort_in_place(values):
    values.sort()
    return None


# -- correct: plain pytest passes each test ---------------------------------------------------


def empty_name():
    return np.str_("")


def mon_wed_days():
    return pd.bdate_range("2024-01-01", periods=4, freq="C", weekmask="Mon Wed")


def tail_view(values):
    return values[1:]


def sorted_same(values):
    values.sort()
    return values


def add_then_read(x, y):
    x += 1
    return y.copy()


def transposed():
    return np.arange(6).reshape(2, 3).T


def read_only_ones():
    return np.broadcast_to(np.ones(3), (2, 3))


def defensive_values(df):
    # wrong: the frame's own memory (a view), where the test demands a copy
    return df.to_numpy()


def column_view(df):
    return df["a"].to_numpy()


def series_values(s):
    return s.values


def index_values(df):
    return df.index.to_numpy()
