"""The sending side: a numpy/pandas value's wire form (before its round trip, `codec.encode`)."""

from __future__ import annotations

import base64
import sys
from typing import Any

from .base import _INDEX_CLASSES, _STORAGES, KINDS, MAX_COLUMNS, MAX_HOLIDAYS, STRING_DTYPES, Encode, NotData, _no_scope


def _encode(np: Any, value: Any, depth: int, item: Encode) -> Any:
    t = type(value)
    if t is np.ndarray:
        return ["NA", _array(np, value, depth, item, layout=True)]
    if isinstance(value, np.generic):
        dtype = value.dtype
        if t is not dtype.type or dtype.kind not in KINDS or dtype.kind == "O":
            raise NotData(f"a numpy scalar of type {t.__name__}")
        if dtype.kind == "U":
            return ["NS", [dtype.str, str.__str__(value)]]  # str() would drop trailing NULs
        return ["NS", [dtype.str, base64.b64encode(value.tobytes() if dtype.kind != "S" else bytes(value)).decode()]]
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    with _no_scope():
        if t is pd.RangeIndex:
            return ["PR", [value.start, value.stop, value.step, item(value.name, depth + 1)]]
        if t.__name__ in _INDEX_CLASSES and t is getattr(pd, t.__name__):
            return ["PI", _index(np, pd, value, depth, item)]
        if t is pd.Series:
            return [
                "PS",
                [
                    _values(np, value, depth, item),
                    _any_index(np, pd, value.index, depth, item),
                    item(value.name, depth + 1),
                    *_frame_extras(value, depth, item),
                ],
            ]
        if t is pd.DataFrame:
            if value.shape[1] > MAX_COLUMNS:
                raise NotData(f"a DataFrame of more than {MAX_COLUMNS} columns")
            columns = [_values(np, value.iloc[:, i], depth, item) for i in range(value.shape[1])]
            return [
                "PF",
                [
                    _any_index(np, pd, value.columns, depth, item),
                    _any_index(np, pd, value.index, depth, item),
                    columns,
                    *_frame_extras(value, depth, item),
                ],
            ]
    return None


def _frame_extras(value: Any, depth: int, item: Encode) -> list[Any]:
    """A Series' or DataFrame's flags and attrs (plain data, or NotData)."""
    attrs = value.attrs
    if type(attrs) is not dict:
        raise NotData("pandas attrs that are not a dict")
    return [[bool(value.flags.allows_duplicate_labels)], item(attrs, depth + 1)]


def _locked(value: Any) -> bool:
    """A read-only array numpy refuses to make writeable again (asked of numpy: set and put back)."""
    if value.flags.writeable:
        return False
    try:
        value.flags.writeable = True
    except ValueError:
        return True
    value.flags.writeable = False
    return False


def _array(np: Any, value: Any, depth: int, item: Encode, *, layout: bool) -> list[Any]:
    dtype = value.dtype
    if dtype.kind not in KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise NotData(f"a numpy array of dtype {dtype.str}")
    flags = (
        [list(value.strides), bool(value.flags.writeable), _locked(value), bool(value.flags.owndata)]
        if layout
        else None
    )
    if dtype.kind == "O":
        with _no_scope():
            elements = [item(v, depth + 1) for v in value.ravel(order="C")]
        return [dtype.str, list(value.shape), elements, flags]
    data = np.ascontiguousarray(value).tobytes()
    return [dtype.str, list(value.shape), base64.b64encode(data).decode(), flags]


def _values(np: Any, values: Any, depth: int, item: Encode) -> list[Any]:
    """A Series', column's or Index's values: an array body, or `[string dtype, storage, object
    array body]` for pandas' own string dtypes (`str`, `string`: elements str or None)."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype):
        return _array(np, np.asarray(values.to_numpy()), depth, item, layout=False)
    if str(dtype) in STRING_DTYPES and getattr(dtype, "storage", None) in _STORAGES:
        array = np.asarray(values.to_numpy(dtype=object, na_value=None))
        return [str(dtype), dtype.storage, _array(np, array, depth, item, layout=False)]
    raise NotData(f"pandas values of dtype {dtype}")


def _freq(pd: Any, index: Any) -> Any:
    freq = getattr(index, "freq", None)
    if freq is None:
        return None
    if type(freq) is pd.offsets.CustomBusinessDay:
        holidays = [str(h) for h in freq.holidays]
        if len(holidays) > MAX_HOLIDAYS:
            raise NotData("a custom business-day frequency that does not cross")
        delta = freq.offset
        delta_parts = [delta.days, delta.seconds, delta.microseconds]
        return ["C", [freq.n, bool(freq.normalize), str(freq.weekmask), holidays, delta_parts]]
    return [str(freq.freqstr)]


def _index(np: Any, pd: Any, index: Any, depth: int, item: Encode) -> list[Any]:
    return [type(index).__name__, item(index.name, depth + 1), _values(np, index, depth, item), _freq(pd, index)]


def _any_index(np: Any, pd: Any, index: Any, depth: int, item: Encode) -> Any:
    encoded = _encode(np, index, depth + 1, item)
    if encoded is None or encoded[0] not in ("PI", "PR"):
        raise NotData(f"a pandas index of type {type(index).__name__}")
    return encoded
