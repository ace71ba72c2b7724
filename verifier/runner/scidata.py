"""numpy and pandas values as data across the process boundary (the wire codec's second half).

A suite that declares numpy or pandas (`requirements` in suite.toml) has them on both sides of
the candidate boundary, and their common data types cross as **values**, like a list:

- `NA` `numpy.ndarray` (exact, never a subclass): `[dtype, shape, data]`, the dtype's exact
  text (`'<f8'`, `'<M8[ns]'`, `'<U5'`, `'|O'`), the shape, and the C-order bytes in base64; for
  the object dtype, the elements as plain wire values instead.
- `NS` a numpy scalar (`numpy.float64`, `numpy.int32`, `numpy.bool_`, `numpy.datetime64`, ...):
  `[dtype, data]`.
- `PI` `pandas.Index`, `DatetimeIndex`, `TimedeltaIndex` (numpy dtypes only): `[class, name,
  values, freq]`; `PR` `pandas.RangeIndex`: `[start, stop, step, name]`.
- `PS` `pandas.Series` (a numpy dtype): `[values, index, name]`.
- `PF` `pandas.DataFrame` (every column a numpy dtype): `[columns, index, [column values...]]`.
- Values of pandas' own string dtypes (`str`, pandas 3's default for text, and `string`) cross
  in a Series, column or Index as `[dtype name, object array of str or None]`.

The receiver rebuilds each as a real object of **its own** numpy or pandas (`numpy.frombuffer`
of the exact bytes, never unpickling), after checking the dtype against a fixed pattern and
kinds (`b i u f c m M S U O`: no structured, subarray or void dtype), the shape (at most
`MAX_NDIM` dimensions of at most `MAX_DIM` each), and that the bytes are exactly shape x
itemsize: the bytes are in the frame, whose size the receiver bounded before reading it, so a
forged shape cannot make it allocate more than the frame holds. Elements of an object array,
names and labels must be plain data themselves (no reference to a candidate object: such an
array stays a handle). Any other type of these libraries (a masked array, a matrix, an
extension dtype such as `category` or `Int64`, a MultiIndex, a Timestamp) is not data: it stays
a handle in the candidate's process. The libraries are imported only when a value of theirs
is met: this module is standard library only, like the rest of the runner.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import math
import re
import sys
from collections.abc import Callable
from typing import Any

#: Wire tags of this codec (`wire.encode` / `wire.decode` hand these to it).
TAGS = frozenset({"NA", "NS", "PI", "PR", "PS", "PF"})
MAX_NDIM = 32
#: Largest length of one dimension (or of a RangeIndex).
MAX_DIM = 2**40
#: Largest itemsize of a fixed-width string dtype (`<U`, `S`).
MAX_ITEMSIZE = 1 << 20
#: Most columns of a DataFrame that crosses as data (more: it stays a handle).
MAX_COLUMNS = 4096
#: Array kinds that cross: bool, ints, floats, complex, timedelta, datetime, bytes, str, object.
KINDS = frozenset("biufcmMSUO")
_DTYPE = re.compile(r"^[<>|=]?(?:[?biufcSU]\d{0,7}|[mM]8(?:\[\d{0,6}[A-Za-z]{1,2}\])?|O)$")
_INDEX_CLASSES = ("Index", "DatetimeIndex", "TimedeltaIndex")
#: pandas' own string dtypes, which cross as their name and an object array of str or None.
STRING_DTYPES = ("str", "string")

Encode = Callable[[Any, int], Any]
Decode = Callable[[Any, int], Any]


class NotData(TypeError):
    """A numpy/pandas value that has no exact wire form (it stays a handle), or a malformed body."""


def _module(name: str) -> Any:
    """numpy or pandas on this side, or NotData (a value of a library this side lacks)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise NotData(f"a {name} value, and {name} is not installed here") from None


def mutable(value: Any) -> bool:
    """Whether `value` is an array, Series or DataFrame (a call may change it in place)."""
    np, pd = sys.modules.get("numpy"), sys.modules.get("pandas")
    t = type(value)
    return (np is not None and t is np.ndarray) or (pd is not None and t in (pd.Series, pd.DataFrame))


def encode(value: Any, depth: int, item: Encode) -> Any:
    """The wire form of `value` if it is a numpy/pandas data value, None if it is of another type.
    `item` encodes an object array's elements and names as plain data (no references). Raises
    NotData for a value of these types that has no exact form (an extension dtype, a MultiIndex)."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    t = type(value)
    if t is np.ndarray:
        return ["NA", _array(np, value, depth, item)]
    if isinstance(value, np.generic):
        dtype = value.dtype
        if t is not dtype.type or dtype.kind not in KINDS or dtype.kind == "O":
            raise NotData(f"a numpy scalar of type {t.__name__}")
        return ["NS", [dtype.str, base64.b64encode(value.tobytes()).decode()]]
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    if t is pd.RangeIndex:
        return ["PR", [value.start, value.stop, value.step, item(value.name, depth + 1)]]
    if t.__name__ in _INDEX_CLASSES and t is getattr(pd, t.__name__):
        return ["PI", _index(np, value, depth, item)]
    if t is pd.Series:
        return [
            "PS",
            [_values(np, value, depth, item), _any_index(pd, value.index, depth, item), item(value.name, depth)],
        ]
    if t is pd.DataFrame:
        if value.shape[1] > MAX_COLUMNS:
            raise NotData(f"a DataFrame of more than {MAX_COLUMNS} columns")
        columns = [_values(np, value.iloc[:, i], depth, item) for i in range(value.shape[1])]
        return ["PF", [_any_index(pd, value.columns, depth, item), _any_index(pd, value.index, depth, item), columns]]
    return None


def _array(np: Any, value: Any, depth: int, item: Encode) -> list[Any]:
    dtype = value.dtype
    if dtype.kind not in KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise NotData(f"a numpy array of dtype {dtype.str}")
    if dtype.kind == "O":
        return [dtype.str, list(value.shape), [item(v, depth + 1) for v in value.ravel(order="C")]]
    data = np.ascontiguousarray(value).tobytes()
    return [dtype.str, list(value.shape), base64.b64encode(data).decode()]


def _values(np: Any, values: Any, depth: int, item: Encode) -> list[Any]:
    """A Series', column's or Index's values: an array body, or `[string dtype, object array body]`
    for pandas' own string dtypes (`str`, `string`: elements str or None)."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype):
        return _array(np, values.to_numpy(), depth, item)
    if str(dtype) in STRING_DTYPES:
        return [str(dtype), _array(np, values.to_numpy(dtype=object, na_value=None), depth, item)]
    raise NotData(f"pandas values of dtype {dtype}")


def _index(np: Any, index: Any, depth: int, item: Encode) -> list[Any]:
    freq = getattr(index, "freqstr", None)
    return [type(index).__name__, item(index.name, depth + 1), _values(np, index, depth, item), freq]


def _any_index(pd: Any, index: Any, depth: int, item: Encode) -> Any:
    encoded = encode(index, depth + 1, item)
    if encoded is None or encoded[0] not in ("PI", "PR"):
        raise NotData(f"a pandas index of type {type(index).__name__}")
    return encoded


# -- the receiving side ------------------------------------------------------------------
def decode(tag: str, body: Any, depth: int, item: Decode) -> Any:
    """Rebuild a value of this side's numpy/pandas from its wire form; NotData when malformed.
    `item` decodes plain data only (an object array's elements, names, labels)."""
    if tag == "NA":
        return _decode_array(body, depth, item)
    if tag == "NS":
        np = _module("numpy")
        if type(body) is not list or len(body) != 2:
            raise NotData("malformed numpy scalar")
        dtype = _dtype(np, body[0])
        raw = _bytes(body[1])
        if dtype.kind == "O" or len(raw) != dtype.itemsize:
            raise NotData("malformed numpy scalar")
        return np.frombuffer(raw, dtype=dtype)[0]
    pd = _module("pandas")
    if tag in ("PI", "PR"):
        return _decode_index(pd, tag, body, depth, item)
    if tag == "PS" and type(body) is list and len(body) == 3:
        values = _decode_values(pd, body[0], depth, item)
        index = _decode_index(pd, *_tagged(body[1]), depth, item)
        if values.ndim != 1 or len(values) != len(index):
            raise NotData("malformed pandas Series")
        return pd.Series(values, index=index, name=_label(item(body[2], depth + 1)), copy=False)
    if tag == "PF" and type(body) is list and len(body) == 3 and type(body[2]) is list:
        return _decode_frame(pd, body, depth, item)
    raise NotData("malformed pandas value")


def _dtype(np: Any, text: Any) -> Any:
    if type(text) is not str or not _DTYPE.match(text):
        raise NotData("a dtype that does not cross")
    dtype = np.dtype(text)
    if dtype.kind not in KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise NotData("a dtype that does not cross")
    if dtype.kind != "O" and not 0 < dtype.itemsize <= MAX_ITEMSIZE:
        raise NotData("a dtype of no or too large a size")
    return dtype


def _bytes(text: Any) -> bytes:
    if type(text) is not str:
        raise NotData("malformed array data")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NotData("malformed array data") from None


def _decode_array(body: Any, depth: int, item: Decode) -> Any:
    np = _module("numpy")
    if type(body) is not list or len(body) != 3:
        raise NotData("malformed numpy array")
    text, shape, payload = body
    dtype = _dtype(np, text)
    if (
        type(shape) is not list
        or len(shape) > MAX_NDIM
        or any(type(d) is not int or not 0 <= d <= MAX_DIM for d in shape)
    ):
        raise NotData("a numpy array of a shape that does not cross")
    count = math.prod(shape)
    if dtype.kind == "O":
        if type(payload) is not list or len(payload) != count:
            raise NotData("malformed numpy array")
        flat = np.empty(count, dtype=object)
        for i, value in enumerate(payload):
            flat[i] = item(value, depth + 1)
        return flat.reshape(shape)
    raw = _bytes(payload)
    if len(raw) != count * dtype.itemsize:
        raise NotData("a numpy array whose data is not its shape times its itemsize")
    if count == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()  # its own, writeable memory


def _decode_values(pd: Any, body: Any, depth: int, item: Decode) -> Any:
    """`_values`' form: a numpy array, or an array of one of pandas' string dtypes."""
    if type(body) is list and len(body) == 2:
        text, array = body[0], _decode_array(body[1], depth, item)
        if text not in STRING_DTYPES or array.dtype.kind != "O" or array.ndim != 1:
            raise NotData("malformed pandas string values")
        if any(v is not None and type(v) is not str for v in array):
            raise NotData("pandas string values that are not all str or None")
        return pd.array(array, dtype=text)
    return _decode_array(body, depth, item)


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


def _decode_index(pd: Any, tag: str, body: Any, depth: int, item: Decode) -> Any:
    if type(body) is not list or len(body) != 4:
        raise NotData("malformed pandas index")
    if tag == "PR":
        start, stop, step, name = body
        if any(type(v) is not int for v in (start, stop, step)) or step == 0:
            raise NotData("malformed RangeIndex")
        made = pd.RangeIndex(start, stop, step, name=_label(item(name, depth + 1)))
        if len(made) > MAX_DIM:
            raise NotData("a RangeIndex longer than crosses")
        return made
    cls, name, values, freq = body
    if cls not in _INDEX_CLASSES or (freq is not None and (type(freq) is not str or len(freq) > 64)):
        raise NotData("malformed pandas index")
    array = _decode_values(pd, values, depth, item)
    if array.ndim != 1:
        raise NotData("malformed pandas index")
    try:
        if cls == "Index":
            made = pd.Index(array, dtype=array.dtype, name=_label(item(name, depth + 1)), copy=False)
        else:
            made = getattr(pd, cls)(array, name=_label(item(name, depth + 1)), freq=freq, copy=False)
    except (TypeError, ValueError) as exc:
        raise NotData(f"malformed pandas index ({type(exc).__name__})") from None
    if type(made).__name__ != cls:
        raise NotData("malformed pandas index")
    return made


def _decode_frame(pd: Any, body: list[Any], depth: int, item: Decode) -> Any:
    columns = _decode_index(pd, *_tagged(body[0]), depth, item)
    index = _decode_index(pd, *_tagged(body[1]), depth, item)
    if len(body[2]) != len(columns) or len(columns) > MAX_COLUMNS:
        raise NotData("malformed DataFrame")
    arrays = [_decode_values(pd, v, depth, item) for v in body[2]]
    if any(a.ndim != 1 or len(a) != len(index) for a in arrays):
        raise NotData("malformed DataFrame")
    frame = pd.DataFrame({i: a for i, a in enumerate(arrays)}, index=index, copy=False)
    frame.columns = columns
    return frame


# -- argument mutation, carried back -------------------------------------------------------
def of_libraries(value: Any) -> bool:
    """Whether `value`'s type is numpy's or pandas' (compare it with `same`, never `==`)."""
    return type(value).__module__.partition(".")[0] in ("numpy", "pandas")


def same(original: Any, after: Any) -> bool:
    """Whether two values of these types are equal in every respect that crosses (the same type,
    dtype, shape, bytes, index and names); False for any other type."""
    np = sys.modules.get("numpy")
    if type(original) is not type(after) or np is None or not of_libraries(original):
        return False
    if isinstance(original, np.generic):
        return bool(original.dtype == after.dtype and original.tobytes() == after.tobytes())
    if type(original) is np.ndarray:
        return bool(
            original.dtype == after.dtype
            and original.shape == after.shape
            and original.tobytes() == after.tobytes()
            and (original.dtype.kind != "O" or all(a is b for a, b in zip(original.flat, after.flat, strict=True)))
        )
    pd = sys.modules.get("pandas")
    if pd is None:
        return False
    if isinstance(original, pd.Index):
        return bool(original.equals(after) and original.dtype == after.dtype and _names_equal(original, after))
    if type(original) is pd.Series:
        return bool(_names_equal(original, after) and original.dtype == after.dtype and _frames_equal(original, after))
    if type(original) is pd.DataFrame:
        return bool(list(original.dtypes) == list(after.dtypes) and _frames_equal(original, after))
    return False


def _names_equal(original: Any, after: Any) -> bool:
    a, b = original.name, after.name
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _frames_equal(original: Any, after: Any) -> bool:
    return bool(
        original.index.equals(after.index)
        and type(original.index) is type(after.index)
        and (not hasattr(original, "columns") or original.columns.equals(after.columns))
        and original.equals(after)
    )


def sync(original: Any, after: Any) -> bool:
    """Carry a candidate's in-place change of an array, Series or DataFrame argument back to the
    test's object: True when `original` is of these types (changed or not), else False. An
    array whose shape or dtype the call changed is not changed back (numpy cannot in place)."""
    if not mutable(original) or type(original) is not type(after):
        return False
    if same(original, after):
        return True
    np = sys.modules["numpy"]
    if type(original) is np.ndarray:
        if original.dtype == after.dtype and original.shape == after.shape and original.flags.writeable:
            original[...] = after
        return True
    name = getattr(after, "name", None)
    original._update_inplace(after)  # noqa: SLF001 - pandas' own in-place replacement (what inplace=True does)
    if hasattr(original, "name") and not hasattr(original, "columns"):
        original.name = name
    return True
