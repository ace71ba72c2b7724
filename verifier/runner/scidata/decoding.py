"""The receiving side: a wire form checked and rebuilt with the receiver's own numpy or pandas."""

from __future__ import annotations

import base64
import binascii
import datetime
import math
import sys
import warnings
from typing import Any

from . import base
from .base import _DTYPE, _INDEX_CLASSES, _STORAGES, Decode, NotData, _module


def _decode(tag: str, body: Any, depth: int, item: Decode) -> Any:
    if tag == "NA":
        return _decode_array(body, depth, item, layout=True)
    if tag == "NS":
        np = _module("numpy")
        if type(body) is not list or len(body) != 2 or type(body[0]) is not str or not _DTYPE.match(body[0]):
            raise NotData("malformed numpy scalar")
        kind = body[0].lstrip("<>|=")[:1]
        if kind == "U":  # its text, trailing NULs and all (the round trip checks the dtype)
            if type(body[1]) is not str:
                raise NotData("malformed numpy scalar")
            return np.str_(body[1])
        if kind == "S":
            return np.bytes_(_bytes(body[1]))
        dtype = _dtype(np, body[0])
        raw = _bytes(body[1])
        if dtype.kind in "OSU" or len(raw) != dtype.itemsize:
            raise NotData("malformed numpy scalar")
        return np.frombuffer(raw, dtype=dtype)[0]
    pd = _module("pandas")
    if tag in ("PI", "PR"):
        return _decode_index(pd, tag, body, depth, item)
    if tag == "PS" and type(body) is list and len(body) == 5:
        values = _decode_values(pd, body[0], depth, item)
        index = _decode_index(pd, *_tagged(body[1]), depth, item)
        if values.ndim != 1 or len(values) != len(index):
            raise NotData("malformed pandas Series")
        made = pd.Series(values, index=index, name=_label(item(body[2], depth + 1)), copy=False)
        return _with_extras(made, body[3], body[4], depth, item)
    if tag == "PF" and type(body) is list and len(body) == 5 and type(body[2]) is list:
        return _with_extras(_decode_frame(pd, body, depth, item), body[3], body[4], depth, item)
    raise NotData("malformed pandas value")


def _with_extras(made: Any, flags: Any, attrs: Any, depth: int, item: Decode) -> Any:
    if type(flags) is not list or len(flags) != 1 or type(flags[0]) is not bool:
        raise NotData("malformed pandas flags")
    attrs = item(attrs, depth + 1)
    if type(attrs) is not dict:
        raise NotData("malformed pandas attrs")
    made.attrs = attrs
    made.flags.allows_duplicate_labels = flags[0]
    return made


def _dtype(np: Any, text: Any) -> Any:
    if type(text) is not str or not _DTYPE.match(text):
        raise NotData("a dtype that does not cross")
    dtype = np.dtype(text)
    if dtype.kind not in base.KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise NotData("a dtype that does not cross")
    if dtype.kind != "O" and not 0 < dtype.itemsize <= base.MAX_ITEMSIZE:
        raise NotData("a dtype of no or too large a size")
    return dtype


def _bytes(text: Any) -> bytes:
    if type(text) is not str:
        raise NotData("malformed array data")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NotData("malformed array data") from None


def _check_shape(shape: Any) -> None:
    if (
        type(shape) is not list
        or len(shape) > base.MAX_NDIM
        or any(type(d) is not int or not 0 <= d <= base.MAX_DIM for d in shape)
    ):
        raise NotData("a numpy array of a shape that does not cross")


def _decode_array(body: Any, depth: int, item: Decode, *, layout: bool) -> Any:
    np = _module("numpy")
    if type(body) is not list or len(body) != 4:
        raise NotData("malformed numpy array")
    text, shape, payload, flags = body
    dtype = _dtype(np, text)
    _check_shape(shape)
    count = math.prod(shape)
    if dtype.kind == "O":
        if type(payload) is not list or len(payload) != count:
            raise NotData("malformed numpy array")
        values = np.empty(count, dtype=object)
        for i, value in enumerate(payload):
            values[i] = item(value, depth + 1)
        values = values.reshape(shape)
        size = count * dtype.itemsize
    else:
        raw = _bytes(payload)
        if len(raw) != count * dtype.itemsize:
            raise NotData("a numpy array whose data is not its shape times its itemsize")
        values = np.frombuffer(raw, dtype=dtype).reshape(shape) if count else np.empty(shape, dtype=dtype)
        size = len(raw)
    if not layout:
        if flags is not None:
            raise NotData("malformed numpy array")
        made = np.empty(shape, dtype=dtype)
        made[...] = values
        return made
    return _with_layout(np, dtype, shape, values, size, flags)


def _with_layout(np: Any, dtype: Any, shape: list[int], values: Any, size: int, flags: Any) -> Any:
    """An array of `values` with the strides and flags `flags` names (checked by the caller's
    round trip: what numpy makes differently is refused)."""
    if type(flags) is not list or len(flags) != 4:
        raise NotData("malformed numpy array layout")
    strides, writeable, locked, owndata = flags
    if (
        type(strides) is not list
        or len(strides) != len(shape)
        or any(type(s) is not int for s in strides)
        or any(type(f) is not bool for f in (writeable, locked, owndata))
    ):
        raise NotData("malformed numpy array layout")
    itemsize = dtype.itemsize
    low = high = 0
    if values.size:
        for n, stride in zip(shape, strides, strict=True):
            if stride < 0:
                low += stride * (n - 1)
            else:
                high += stride * (n - 1)
        high += itemsize
    span = high - low
    if span > base.MAX_SPAN_FACTOR * size + base.MAX_SPAN_EXTRA:
        raise NotData("a numpy array layout spanning more memory than crosses")
    if owndata:
        if locked:
            raise NotData("a numpy array layout that does not cross")
        made = np.empty(shape, dtype=dtype)
        if list(made.strides) != strides and len(shape) > 1:
            made = np.empty(shape, dtype=dtype, order="F")
        if list(made.strides) != strides:  # another order of its own memory, or an empty array's
            _set_strides(made, strides)
    elif dtype.hasobject:
        if any(s % itemsize for s in strides) or low % itemsize or locked:
            raise NotData("a numpy array layout that does not cross")
        # A view of an object array of its own (numpy makes none on a buffer): C-shaped at the
        # place, then given the strides (checked by numpy against that array's memory).
        room = np.empty(max(span // itemsize, 1), dtype=object)
        start = -low // itemsize
        made = room[start : start + values.size].reshape(shape)
        _set_strides(made, strides)
    else:
        made = np.ndarray(shape, dtype=dtype, buffer=bytearray(span), offset=-low, strides=strides)
    made[...] = values
    if locked:
        memory = bytes(made.base) if isinstance(made.base, bytearray) else None
        if memory is None:
            raise NotData("a numpy array layout that does not cross")
        made = np.ndarray(shape, dtype=dtype, buffer=memory, offset=-low, strides=strides)
    elif not writeable:
        made.flags.writeable = False
    return made


def _set_strides(made: Any, strides: list[int]) -> None:
    """Give `made` these strides in place (numpy checks they stay inside its memory); setting
    strides is deprecated, but `as_strided`'s view has a base that is no array, which numpy
    then never lets a test make writeable again."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            made.strides = tuple(strides)
        except (AttributeError, ValueError, TypeError):
            raise NotData("a numpy array layout that does not cross") from None


def _decode_values(pd: Any, body: Any, depth: int, item: Decode) -> Any:
    """`_values`' form: a numpy array, or an array of one of pandas' string dtypes."""
    if type(body) is list and len(body) == 3:
        text, storage, array = body[0], body[1], _decode_array(body[2], depth, item, layout=False)
        if text not in base.STRING_DTYPES or storage not in _STORAGES or array.dtype.kind != "O" or array.ndim != 1:
            raise NotData("malformed pandas string values")
        if any(v is not None and type(v) is not str for v in array):
            raise NotData("pandas string values that are not all str or None")
        np = sys.modules["numpy"]
        dtype = pd.StringDtype(storage) if text == "string" else pd.StringDtype(storage, na_value=np.nan)
        return pd.array(array, dtype=dtype)
    return _decode_array(body, depth, item, layout=False)


def _tagged(value: Any) -> tuple[str, Any]:
    if type(value) is not list or len(value) != 2 or value[0] not in ("PI", "PR"):
        raise NotData("malformed pandas index")
    return value[0], value[1]


def _label(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise NotData("a pandas name that is not hashable") from None
    return value


def _decode_freq(pd: Any, freq: Any) -> Any:
    if freq is None:
        return None
    if type(freq) is list and len(freq) == 1 and type(freq[0]) is str and len(freq[0]) <= 64:
        return pd.tseries.frequencies.to_offset(freq[0])
    if type(freq) is list and len(freq) == 2 and freq[0] == "C" and type(freq[1]) is list and len(freq[1]) == 5:
        n, normalize, weekmask, holidays, delta = freq[1]
        if (
            type(n) is not int
            or type(normalize) is not bool
            or type(weekmask) is not str
            or len(weekmask) > 64
            or type(holidays) is not list
            or len(holidays) > base.MAX_HOLIDAYS
            or any(type(h) is not str or len(h) > 40 for h in holidays)
            or type(delta) is not list
            or len(delta) != 3
            or any(type(d) is not int for d in delta)
        ):
            raise NotData("malformed frequency")
        return pd.offsets.CustomBusinessDay(
            n=n,
            normalize=normalize,
            weekmask=weekmask,
            holidays=holidays,
            offset=datetime.timedelta(days=delta[0], seconds=delta[1], microseconds=delta[2]),
        )
    raise NotData("malformed frequency")


def _decode_index(pd: Any, tag: str, body: Any, depth: int, item: Decode) -> Any:
    if type(body) is not list or len(body) != 4:
        raise NotData("malformed pandas index")
    if tag == "PR":
        start, stop, step, name = body
        if any(type(v) is not int for v in (start, stop, step)) or step == 0:
            raise NotData("malformed RangeIndex")
        made = pd.RangeIndex(start, stop, step, name=_label(item(name, depth + 1)))
        if len(made) > base.MAX_DIM:
            raise NotData("a RangeIndex longer than crosses")
        return made
    cls, name, values, freq = body
    if cls not in _INDEX_CLASSES or (cls == "Index" and freq is not None):
        raise NotData("malformed pandas index")
    array = _decode_values(pd, values, depth, item)
    if array.ndim != 1:
        raise NotData("malformed pandas index")
    try:
        if cls == "Index":
            made = pd.Index(array, dtype=array.dtype, name=_label(item(name, depth + 1)), copy=False)
        else:
            offset = _decode_freq(pd, freq)
            made = getattr(pd, cls)(array, name=_label(item(name, depth + 1)), freq=offset, copy=False)
    except (TypeError, ValueError) as exc:
        raise NotData(f"malformed pandas index ({type(exc).__name__})") from None
    if type(made).__name__ != cls:
        raise NotData("malformed pandas index")
    return made


def _decode_frame(pd: Any, body: list[Any], depth: int, item: Decode) -> Any:
    columns = _decode_index(pd, *_tagged(body[0]), depth, item)
    index = _decode_index(pd, *_tagged(body[1]), depth, item)
    if len(body[2]) != len(columns) or len(columns) > base.MAX_COLUMNS:
        raise NotData("malformed DataFrame")
    arrays = [_decode_values(pd, v, depth, item) for v in body[2]]
    if any(a.ndim != 1 or len(a) != len(index) for a in arrays):
        raise NotData("malformed DataFrame")
    # Built as pandas builds a frame from a dict of columns (consolidated: columns of one dtype
    # in one block), so `to_numpy()` of it is a view or a copy as it is of such a frame.
    frame = pd.DataFrame({i: a for i, a in enumerate(arrays)}, index=index)
    frame.columns = columns
    return frame
