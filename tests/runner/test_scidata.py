"""numpy and pandas values cross as data (verifier/runner/scidata/): exact round trips, what
stays a handle, what a receiver refuses, and argument mutation carried back (no engine: the
codec on its own; tests/adversarial/test_scidata_forgery.py runs it between real processes)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from verifier.runner import proxy, scidata, wire


def _crossed(value: Any, refer: wire.Refer | None = None) -> Any:
    encoded = wire.encode(value, refer=refer)
    return wire.decode(wire.loads(wire.dumps(encoded), max_values=1 << 20))


def _same_array(a: Any, b: Any) -> None:
    assert type(b) is np.ndarray and b.dtype == a.dtype and b.shape == a.shape
    assert b.tobytes() == a.tobytes()  # exact: every bit, NaN payloads and signed zeros too


@given(hnp.arrays(hnp.scalar_dtypes(), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
@settings(max_examples=60, deadline=None)
def test_arrays_cross_exactly(array: Any) -> None:
    _same_array(array, _crossed(array))


def test_scalars_object_arrays_and_order() -> None:
    for scalar in (np.float64(-0.0), np.int8(-3), np.bool_(True), np.datetime64("2020-01-02", "D"), np.str_("x")):
        back = _crossed(scalar)
        assert type(back) is type(scalar) and back.tobytes() == scalar.tobytes()
    mixed = np.array([1, "a", None, [1, 2], np.float32(2)], dtype=object)
    back = _crossed(mixed)
    assert back.dtype == object and back.tolist() == mixed.tolist() and type(back[4]) is np.float32
    fortran = np.asfortranarray(np.arange(6).reshape(2, 3))
    assert (_crossed(fortran) == fortran).all()
    assert _crossed(np.array(1.5)).shape == ()


def test_pandas_values_cross_with_index_names_and_dtypes() -> None:
    series = pd.Series([1.5, np.nan], index=pd.Index([10, 20], name="k"), name="x")
    pd.testing.assert_series_equal(_crossed(series), series, check_exact=True)
    frame = pd.DataFrame(
        {"a": np.array([1, 2], dtype="int32"), "b": [0.5, 1.5], "t": pd.to_datetime(["2020-01-01", "2021-01-01"])},
        index=pd.RangeIndex(5, 7, name="row"),
    )
    pd.testing.assert_frame_equal(_crossed(frame), frame, check_exact=True)
    days = pd.date_range("2020-01-01", periods=3, freq="D", name="t")
    back = _crossed(days)
    pd.testing.assert_index_equal(back, days, exact=True)
    assert back.freq == days.freq
    dup = pd.DataFrame([[1, 2]], columns=["c", "c"])
    pd.testing.assert_frame_equal(_crossed(dup), dup)
    empty = pd.DataFrame(index=pd.RangeIndex(0))
    pd.testing.assert_frame_equal(_crossed(empty), empty)
    text = pd.DataFrame({"name": ["x", None], "other": pd.Series(["y", None], dtype="string")})
    pd.testing.assert_frame_equal(_crossed(text), text, check_exact=True)  # pandas' string dtypes too


def test_other_library_types_stay_references() -> None:
    """A subclass, a masked array, an extension dtype or a MultiIndex is no data: a reference
    (a handle on the trusted side), or refused where nothing may be referred to."""
    referred: list[Any] = []

    def refer(obj: Any) -> Any:
        referred.append(obj)
        return ["H", [len(referred), type(obj).__name__, "object", [], []]]

    class Forged(np.ndarray):
        def __eq__(self, other: object) -> Any:
            return True

    others = [
        np.arange(3).view(Forged),
        np.ma.masked_array([1, 2], mask=[0, 1]),
        np.zeros(2, dtype=[("a", "i4")]),
        pd.Series(["a", None], dtype="category"),
        pd.Series([1, None], dtype="Int64"),
        pd.MultiIndex.from_tuples([(1, 2)]),
        pd.Timestamp("2020-01-01"),
        np.array([object()], dtype=object),
    ]
    for value in others:
        assert wire.encode(value, refer=refer)[0] == "H"
        with pytest.raises(wire.BadWireValue):
            wire.encode(value)
    assert len(referred) == len(others)


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        (["NA", ["<f8", [10**6], "AAAAAAAAAAA="]], "a shape the bytes do not fill"),
        (["NA", ["<f8", [2**41, 0], ""]], "a dimension over MAX_DIM"),
        (["NA", ["<f8", [1] * 33, "AAAAAAAAAAA="]], "more dimensions than MAX_NDIM"),
        (["NA", ["<U99999999", [1], ""]], "an itemsize over MAX_ITEMSIZE"),
        (["NA", ["S0", [2**40], ""]], "an itemsize of 0 with a huge shape"),
        (["NA", ["V8", [1], "AAAAAAAAAAA="]], "a void dtype"),
        (["NA", ["[('a', '<i4')]", [1], "AAAAAA=="]], "a structured dtype"),
        (["NA", ["(2,)i4", [1], "AAAAAAAAAAA="]], "a subarray dtype"),
        (["NA", ["|O", [1], [["H", [1, "x", "object", [], []]]]]], "a reference inside an object array"),
        (["NA", ["|O", [2], [1]]], "fewer elements than the shape"),
        (["NA", ["<f8", [1], "!!!"]], "data that is not base64"),
        (["NS", ["|O", ""]], "an object scalar"),
        (["PS", [["NA", ["<f8", [2], "A" * 20 + "A="]], ["PR", [0, 3, 1, None]], None]], "values and index differ"),
        (["PR", [0, 2**62, 1, None]], "a RangeIndex longer than MAX_DIM"),
        (["PR", [0, 10, 1, [1]]], "an unhashable name"),
        (["PI", ["MultiIndex", None, ["<i8", [0], ""], None]], "an index class that does not cross"),
    ],
)
def test_forged_wire_forms_are_refused(forged: Any, why: str) -> None:
    with pytest.raises(wire.BadWireValue):
        wire.decode(forged)


def test_mutation_of_arrays_and_frames_is_carried_back() -> None:
    array = np.zeros(3)
    kept = array
    frame = pd.DataFrame({"a": [1, 2]})
    series = pd.Series([1.0, 2.0], name="s")
    args = [array, frame, series, {"inner": np.ones(2)}]
    after_frame = frame.copy()
    after_frame["b"] = [3, 4]
    after_series = series.copy()
    after_series.iloc[0] = 9.0
    after = [np.array([1.0, 2.0, 3.0]), after_frame, after_series, {"inner": np.array([5.0, 5.0])}]
    assert proxy._has_mutable(tuple(args))
    proxy._sync_in_place(args, _crossed(after))
    assert args[0] is kept and kept.tolist() == [1.0, 2.0, 3.0]
    assert list(frame.columns) == ["a", "b"] and frame["b"].tolist() == [3, 4]
    assert series.tolist() == [9.0, 2.0] and series.name == "s"
    assert args[3]["inner"].tolist() == [5.0, 5.0]
    index = pd.Index([1, 2])
    holder = [index]
    proxy._sync_in_place(holder, [pd.Index([1, 2])])
    assert holder[0] is index  # equal: nothing replaced, and never an elementwise `==` asked for truth


def test_the_codec_is_standard_library_only_at_import() -> None:
    source = scidata.__file__
    with open(source) as handle:
        text = handle.read()
    assert "import numpy" not in text and "import pandas" not in text


# -- issue 32 §1: exactly the value, or nothing -------------------------------------------------


def _in_scope(forged: Any, known: list[Any]) -> Any:
    with scidata.scope(known):
        return wire.decode(forged)


@given(
    hnp.arrays(
        hnp.scalar_dtypes()
        | hnp.byte_string_dtypes()
        | hnp.unicode_string_dtypes()
        | hnp.integer_dtypes(endianness=">"),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    ),
    st.sampled_from(["plain", "T", "step", "neg", "F", "ro", "bcast", "view"]),
)
@settings(max_examples=150, deadline=None)
def test_arrays_cross_with_their_layout_and_flags(array: Any, layout: str) -> None:
    if layout == "T":
        array = array.T
    elif layout == "step" and array.ndim:
        array = array[::2]
    elif layout == "neg" and array.ndim:
        array = array[::-1]
    elif layout == "F":
        array = np.asfortranarray(array)
    elif layout == "ro":
        array.flags.writeable = False
    elif layout == "bcast" and array.ndim:
        array = np.broadcast_to(array, (2, *array.shape))
    elif layout == "view":
        array = array.view()
    back = _crossed(array)
    _same_array(array, back)
    assert back.strides == array.strides
    for flag in ("writeable", "owndata", "c_contiguous", "f_contiguous"):
        assert getattr(back.flags, flag) == getattr(array.flags, flag), flag


def test_string_scalars_keep_trailing_nuls_and_zero_size() -> None:
    for scalar in (np.str_("ab\x00"), np.bytes_(b"ab\x00"), np.str_(""), np.bytes_(b"")):
        back = _crossed(scalar)
        assert type(back) is type(scalar) and back.dtype == scalar.dtype and back[:] == scalar[:]
    assert _crossed(np.str_("ab\x00")) != "ab"
    with pytest.raises(wire.BadWireValue):  # "a" claimed as <U2: its rebuilt dtype is <U1
        wire.decode(["NS", ["<U2", "a"]])


def test_custom_business_day_index_crosses_or_stays_a_handle() -> None:
    days = pd.bdate_range("2024-01-01", periods=5, freq="C", weekmask="Mon Wed", holidays=["2024-01-03"])
    back = _crossed(days)
    pd.testing.assert_index_equal(back, days, exact=True)
    assert back.freq == days.freq and back.freq.holidays == days.freq.holidays


def test_identity_and_views_within_one_message() -> None:
    a = np.arange(6.0)
    with scidata.scope() as sent:
        encoded = wire.loads(wire.dumps(wire.encode([a, a[1:], a, a[::-2]])), max_values=1 << 20)
    assert [e[0] for e in encoded[1]] == ["NA", "NV", "NR", "NV"] and sent[0] is a
    with scidata.scope():
        first, tail, again, back = wire.decode(encoded)
    assert again is first and np.shares_memory(tail, first) and np.shares_memory(back, first)
    tail[0] = 99.0
    assert first[1] == 99.0 and back.tolist() == first[::-2].tolist()
    # An answer naming the request's arrays: the test's own objects, or views of them.
    assert _in_scope(["NR", [0]], [a]) is a
    view = _in_scope(["NV", [0, 8, "<f8", [2], [8], True, base64.b64encode(a[1:3].tobytes()).decode()]], [a])
    assert np.shares_memory(view, a) and view.tolist() == a[1:3].tolist()


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        (["NR", [1]], "a reference to a value not met"),
        (["NV", [0, 48, "<f8", [1], [8], True, "AAAAAAAAAAA="]], "a view past the array's end"),
        (["NV", [0, -8, "<f8", [1], [8], True, "AAAAAAAAAAA="]], "a view before the array's start"),
        (["NV", [0, 0, "<f8", [7], [8], True, "A" * 76]], "a view longer than the array"),
        (["NV", [0, 0, "<f8", [2], [-8], True, "A" * 22 + "=="]], "a view running backwards out of it"),
        (["NV", [0, 0, "<f8", [1], [8], True, "AAAAAAAA8D8="]], "a view whose bytes are not the array's"),
        (["NV", [0, 0, "|O", [1], [8], True, []]], "an object view of raw memory"),
        (["NV", [0, 0, "<f8", [1], [8], True, "AAAAAAAAAAA="], 0], "malformed"),
        (["NA", ["<f8", [2], "A" * 22 + "==", [[8 * 10**9], True, False, False]]], "a layout spanning too much"),
        (["NA", ["<f8", [2], "A" * 22 + "==", [[16], True, False, True]]], "owned, of strides numpy gives none"),
        (["NA", ["<f8", [2], "A" * 22 + "==", [[8], 1, False, True]]], "a flag that is not a bool"),
        (["NA", ["<f8", [2], "A" * 22 + "==", None]], "no layout"),
    ],
)
def test_forged_references_views_and_layouts_are_refused(forged: Any, why: str) -> None:
    with pytest.raises(wire.BadWireValue):
        _in_scope(forged, [np.zeros(6)])
    with pytest.raises(wire.BadWireValue):  # outside a call, no reference at all
        wire.decode(["NR", [0]])


def test_in_place_changes_are_carried_exactly_or_abort() -> None:
    values, frame = np.arange(6.0), pd.DataFrame({"a": [1, 2]}, index=[10, 20])
    after_values = np.arange(6.0)
    after_values.shape = (2, 3)  # what `a.shape = ...` leaves: its own memory still
    after_frame = frame.copy()
    after_frame.index = after_frame.index.astype("int32").rename("k")
    after_frame.columns.name = "c"
    after_frame.attrs["x"] = 1
    after_frame.flags.allows_duplicate_labels = False
    holder = [values, frame]
    proxy._sync_in_place(holder, _crossed([after_values, after_frame]))
    assert holder[0] is values and values.shape == (2, 3)
    assert frame.index.dtype == np.int32 and frame.index.name == "k" and frame.columns.name == "c"
    assert frame.attrs == {"x": 1} and not frame.flags.allows_duplicate_labels
    strided = np.arange(6.0)[::2]
    with pytest.raises(scidata.NotCarried, match="dtype"):  # numpy cannot reinterpret a strided array
        scidata.sync(strided, np.arange(3.0).view("<i4"), wire.PLAIN)
    with pytest.raises(scidata.NotCarried, match="type"):
        scidata.sync(np.arange(3.0), object(), wire.PLAIN)
    # names count, as a test sees them
    assert not scidata.same(pd.Index([1, 2]), pd.Index([1, 2], name="n"), wire.PLAIN)


def test_a_rebuilt_frame_is_laid_out_as_pandas_builds_one() -> None:
    """`to_numpy()` of a frame of one dtype is pandas' read-only view of its one block, as of
    the frame the test built (found by the generated differential cases)."""
    frame = pd.DataFrame({0: np.arange(3.0), 1: np.arange(3.0)})
    mine, back = frame.to_numpy(), _crossed(frame).to_numpy()
    assert (back.strides, back.flags.writeable, back.flags.owndata) == (
        mine.strides,
        mine.flags.writeable,
        mine.flags.owndata,
    )


def _answer(result_of: Any, *args: Any) -> Any:
    """`result_of(*args)` as the tests get it: the args crossed to a candidate side, the answer
    crossed back in the scope of the test's own args (as proxy.py and candidate.py do)."""
    with scidata.scope() as sent:
        request = wire.loads(wire.dumps(wire.encode(list(args))), max_values=1 << 20)
    with scidata.scope() as received:
        theirs = wire.decode(request)
    with scidata.scope(received):
        reply = wire.loads(wire.dumps(wire.encode(result_of(*theirs))), max_values=1 << 20)
    with scidata.scope(sent):
        return wire.decode(reply)


@pytest.mark.parametrize(
    ("build", "op"),
    [
        (lambda: pd.DataFrame({"a": [1, 2], "b": [3, 4]}), lambda df: df.to_numpy()),
        (lambda: pd.DataFrame({"a": [1, 2], "b": [3, 4]}), lambda df: df.values[1:]),
        (lambda: pd.DataFrame({"a": [1, 2], "b": [3, 4]}), lambda df: np.asarray(df).T),
        (lambda: pd.DataFrame({"a": [1, 2], "b": [1.5, 2.5]}), lambda df: df["a"].to_numpy()),
        (lambda: pd.DataFrame({"a": [1, 2], "b": [1.5, 2.5]}), lambda df: df.to_numpy()),
        (lambda: pd.DataFrame({"a": [1.0, 2.0]}, index=[5, 6]), lambda df: df.index.to_numpy()),
        (lambda: pd.DataFrame({"a": [1, 2, 3]}), lambda df: df.iloc[1:].to_numpy()),
        (lambda: pd.Series([1.0, 2.0, 3.0]), lambda s: s.values[::-1]),
        (lambda: pd.Index([4, 5, 6]), lambda i: i.to_numpy()),
    ],
)
def test_views_of_a_pandas_arguments_memory_answer_as_in_one_process(build: Any, op: Any) -> None:
    """Issue 32 §1: `df.to_numpy()`, `series.values`, `df.index.to_numpy()` and views of them
    are views of the test's own object's memory (shares_memory, flags, strides), or copies where
    they are copies in one process."""
    value, mine = build(), build()
    back, real = _answer(op, value), op(mine)
    assert type(back) is np.ndarray and back.tolist() == real.tolist()
    assert (back.dtype, back.shape, back.strides) == (real.dtype, real.shape, real.strides)
    for flag in ("writeable", "owndata", "c_contiguous", "f_contiguous"):
        assert getattr(back.flags, flag) == getattr(real.flags, flag), flag
    for part in ("values", "index"):
        if part == "values" or hasattr(value, "index"):
            of_value = value if part == "values" else value.index
            of_mine = mine if part == "values" else mine.index
            assert np.shares_memory(back, of_value) == np.shares_memory(real, of_mine), part


def test_a_view_of_a_frame_laid_out_otherwise_here_aborts() -> None:
    """The test's frame holds two blocks, the candidate's (rebuilt consolidated) one: its
    `to_numpy()` is a view there and a fresh array here, which no copy answers as: an abort."""
    df = pd.DataFrame({"a": [1, 2]})
    df["b"] = [3, 4]
    with pytest.raises(scidata.Aliased):
        _answer(lambda d: d.to_numpy(), df)


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        (["NP", [0, "values", ["<i8", [2], [8]], 16, "<i8", [1], [8], False, "AQAAAAAAAAA="]], "past the end"),
        (["NP", [0, "values", ["<i8", [2], [16]], 0, "<i8", [1], [8], False, "AQAAAAAAAAA="]], "another layout"),
        (["NP", [0, "values", ["<i8", [2], [8]], 0, "<i8", [1], [8], False, "AgAAAAAAAAA="]], "other bytes"),
        (["NP", [0, "nope", ["<i8", [2], [8]], 0, "<i8", [1], [8], False, "AQAAAAAAAAA="]], "no such part"),
        (["NP", [1, "values", ["<i8", [2], [8]], 0, "<i8", [1], [8], False, "AQAAAAAAAAA="]], "not a pandas value"),
        (["NP", [0, "values", ["<i8", [2], [8]], 0, "|O", [1], [8], False, []]], "an object view"),
    ],
)
def test_forged_views_of_pandas_memory_are_refused(forged: Any, why: str) -> None:
    with pytest.raises((wire.BadWireValue, scidata.Aliased)):
        _in_scope(forged, [pd.Series([1, 2]), np.zeros(2)])
