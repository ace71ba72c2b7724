"""numpy and pandas values as data across the process boundary (the wire codec's second half).

A suite that declares numpy or pandas (`requirements` in suite.toml) has them on both sides of
the candidate boundary, and their common data types cross as **values**, like a list:

- `NA` `numpy.ndarray` (exact, never a subclass): `[dtype, shape, data, layout]`, the dtype's
  exact text (`'<f8'`, `'<M8[ns]'`, `'<U5'`, `'|O'`), the shape, the C-order bytes in base64
  (for the object dtype, the elements as plain wire values instead), and the layout a test can
  ask about: `[strides, writeable, locked, owndata]` (`locked`: read-only, and numpy refuses to
  make it writeable again).
- `NS` a numpy scalar (`numpy.float64`, `numpy.int32`, `numpy.bool_`, `numpy.datetime64`, ...):
  `[dtype, data]`; a `str_` scalar's data is its text and a `bytes_` scalar's its bytes (their
  trailing NULs are part of the value: a buffer of the dtype's width would drop them).
- `PI` `pandas.Index`, `DatetimeIndex`, `TimedeltaIndex` (numpy dtypes only): `[class, name,
  values, freq]`; `PR` `pandas.RangeIndex`: `[start, stop, step, name]`.
- `PS` `pandas.Series` (a numpy dtype): `[values, index, name, flags, attrs]`.
- `PF` `pandas.DataFrame` (every column a numpy dtype): `[columns, index, [column values...],
  flags, attrs]`.
- Values of pandas' own string dtypes (`str`, pandas 3's default for text, and `string`) cross
  in a Series, column or Index as `[dtype name, storage, object array of str or None]`.
- Within one call's arguments, or its answer, a value met again is `NR` (`[number]`: the
  same object as the value of that number, counted in the order values were met, the request's
  values first) and an array inside the memory of an earlier array is `NV` (`[number, byte
  offset, dtype, shape, strides, writeable, data]`): the receiver rebuilds the same object, or
  a view of its own array at that place, so `result is arg`, `np.shares_memory` and writes
  through a view answer as they would in one process.

The receiver rebuilds each as a real object of **its own** numpy or pandas (never unpickling),
after checking the dtype against a fixed pattern and kinds (`b i u f c m M S U O`: no
structured, subarray or void dtype), the shape (at most `MAX_NDIM` dimensions of at most
`MAX_DIM` each), that the bytes are exactly shape x itemsize and the memory a layout spans at
most `MAX_SPAN_FACTOR` times them (a forged shape or stride cannot make it allocate more than the
frame holds), and that a view lies inside the memory of the array it names. Then it encodes
what it built again and requires the very bytes it received: what does not rebuild exactly is
refused (`NotData`), never a different value. The sender makes the same round trip before it
sends, so a value that would not rebuild exactly (a frequency pandas cannot rebuild, a layout
numpy cannot make) stays a handle in the candidate's process. Elements of an object array,
names, labels and `attrs` must be plain data themselves (no reference to a candidate object:
such a value stays a handle). Any other type of these libraries (a masked array, a matrix, an
extension dtype such as `category` or `Int64`, a MultiIndex, a Timestamp) is not data: it stays
a handle. The libraries are imported only when a value of theirs is met: this module is
standard library only, like the rest of the runner.

An argument the call changed comes back in its full wire form; `sync` changes the test's own
object in place to it (contents, shape, dtype, strides, flags, names, `attrs`) and then
requires the two forms to be equal: what could not be carried back raises `NotCarried`, which
the trusted side turns into an abort naming it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import datetime
import importlib
import json
import math
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Wire tags of this codec (`wire.encode` / `wire.decode` hand these to it).
TAGS = frozenset({"NA", "NS", "PI", "PR", "PS", "PF", "NR", "NV"})
MAX_NDIM = 32
#: Largest length of one dimension (or of a RangeIndex).
MAX_DIM = 2**40
#: Largest itemsize of a fixed-width string dtype (`<U`, `S`).
MAX_ITEMSIZE = 1 << 20
#: Most columns of a DataFrame that crosses as data (more: it stays a handle).
MAX_COLUMNS = 4096
#: The memory an array's layout may span, in multiples of its data's bytes (plus MAX_SPAN_EXTRA):
#: a sparse view (`a[::1000]`) of more stays a handle.
MAX_SPAN_FACTOR = 16
MAX_SPAN_EXTRA = 1 << 20
#: Most holidays of a custom business-day frequency that crosses.
MAX_HOLIDAYS = 10_000
#: Array kinds that cross: bool, ints, floats, complex, timedelta, datetime, bytes, str, object.
KINDS = frozenset("biufcmMSUO")
_DTYPE = re.compile(r"^[<>|=]?(?:[?biufcSU]\d{0,7}|[mM]8(?:\[\d{0,6}[A-Za-z]{1,2}\])?|O)$")
_INDEX_CLASSES = ("Index", "DatetimeIndex", "TimedeltaIndex")
#: pandas' own string dtypes, which cross as their name, storage and an object array of str or None.
STRING_DTYPES = ("str", "string")
_STORAGES = ("python", "pyarrow")

Encode = Callable[[Any, int], Any]
Decode = Callable[[Any, int], Any]


class NotData(TypeError):
    """A numpy/pandas value that has no exact wire form (it stays a handle), or a malformed body."""


class NotCarried(NotData):
    """An in-place change of an argument that cannot be made to the test's own object: `what`
    names the part (its dtype, shape, strides, flags, index, name, attrs, ...)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"the change of its {what}")
        self.what = what


class _Scope:
    """The numpy/pandas values one message has met so far (`NR` and `NV` name them by number),
    found by identity and, for arrays, by the object that owns their memory (arrays of
    different owners never share memory), so a message of many arrays is not searched whole
    for each."""

    def __init__(self, known: list[Any]) -> None:
        self.values: list[Any] = []
        self.numbers: dict[int, int] = {}
        self.owners: dict[int, list[int]] = {}
        for value in known:
            self.add(value)

    def add(self, value: Any) -> None:
        number = len(self.values)
        self.values.append(value)  # kept alive: its id stays its own
        self.numbers.setdefault(id(value), number)
        if _is_array(value):
            self.owners.setdefault(id(_owner(value)), []).append(number)


def _is_array(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and type(value) is np.ndarray


def _owner(array: Any) -> Any:
    """The object at the end of an array's chain of bases (what owns its memory)."""
    owner = array
    for _ in range(1000):
        base = getattr(owner, "base", None)
        if base is None and type(owner) is memoryview:
            base = owner.obj
        if base is None:
            return owner
        owner = base
    return owner


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("scidata_scope", default=None)


@contextlib.contextmanager
def scope(known: list[Any] | None = None) -> Iterator[list[Any]]:
    """Encode or decode one message's values in here: identity and views between them cross.
    `known`: the values of the request (its own `scope`'s list) that the answer may name. Yields
    the list of values met, in order."""
    made = _Scope(known or [])
    token = _SCOPE.set(made)
    try:
        yield made.values
    finally:
        _SCOPE.reset(token)


@contextlib.contextmanager
def _no_scope() -> Iterator[None]:
    token = _SCOPE.set(None)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def _module(name: str) -> Any:
    """numpy or pandas on this side, or NotData (a value of a library this side lacks)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise NotData(f"a {name} value, and {name} is not installed here") from None


def _index_types(pd: Any) -> tuple[type, ...]:
    return tuple(getattr(pd, n) for n in ("Index", "RangeIndex", "DatetimeIndex", "TimedeltaIndex"))


def mutable(value: Any) -> bool:
    """Whether `value` is an array, Series, DataFrame or Index that crosses (a call may change it
    in place: its contents, shape, dtype, flags, names, attrs)."""
    np, pd = sys.modules.get("numpy"), sys.modules.get("pandas")
    t = type(value)
    if np is not None and t is np.ndarray:
        return True
    return pd is not None and (t in (pd.Series, pd.DataFrame) or t in _index_types(pd))


@dataclass(frozen=True)
class Codec:
    """The plain-data codec's two halves (`wire.PLAIN`), for an object array's elements and names
    and for the round trips: handed in by the caller, so this module never imports `wire`."""

    encode: Encode
    decode: Decode


def _dump(form: Any) -> str:
    return json.dumps(form, separators=(",", ":"))


# -- the sending side --------------------------------------------------------------------
def encode(value: Any, depth: int, codec: Codec) -> Any:
    """The wire form of `value` if it is a numpy/pandas data value, None if it is of another type.
    `codec` encodes an object array's elements and names as plain data (no references). Raises
    NotData for a value of these types that has no exact form (an extension dtype, a MultiIndex,
    a value that would not rebuild exactly)."""
    np = sys.modules.get("numpy")
    if np is None or not _ours(value):
        return None
    try:
        current = _SCOPE.get()
        if current is not None and mutable(value):
            named = _named(np, current, value)
            if named is not None:
                if named[0] == "NV":
                    current.add(value)
                return named
        made = _encode(np, value, depth, codec.encode)
        if made is None:
            return None
        _round_trip(value, made, depth, codec)
    except NotData:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the libraries raise: no exact form
        raise NotData(f"a {type(value).__name__} with no exact form ({type(exc).__name__})") from None
    if current is not None and mutable(value):
        current.add(value)
    return made


def _ours(value: Any) -> bool:
    return type(value).__module__.partition(".")[0] in ("numpy", "pandas")


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


def _round_trip(value: Any, form: Any, depth: int, codec: Codec) -> None:
    """The sender's check: `form` rebuilds into a value whose form is `form` again, of the same
    type (and, for an index, the same frequency); else NotData (the value stays a handle)."""
    item, unitem = codec.encode, codec.decode
    with _no_scope():
        try:
            made = _decode(form[0], form[1], depth, unitem)
        except (NotData, ValueError, TypeError, OverflowError):
            raise NotData(f"a {type(value).__name__} that does not rebuild exactly") from None
        again = _encode(sys.modules["numpy"], made, depth, item)
    if type(made) is not type(value) or _dump(again) != _dump(form):
        raise NotData(f"a {type(value).__name__} that does not rebuild exactly")
    if getattr(value, "freq", None) != getattr(made, "freq", None):
        raise NotData(f"a {type(value).__name__} whose frequency does not rebuild exactly")


# -- identity and views within one message ----------------------------------------------
def _bounds(np: Any, array: Any) -> tuple[int, int]:
    """The byte range an array's elements occupy (empty arrays: an empty range)."""
    if array.size == 0:
        return (0, 0)
    low = high = array.__array_interface__["data"][0]
    for size, stride in zip(array.shape, array.strides, strict=True):
        if stride < 0:
            low += stride * (size - 1)
        else:
            high += stride * (size - 1)
    return (low, high + array.dtype.itemsize)


def _named(np: Any, current: _Scope, value: Any) -> Any:
    """`NR` when `value` was met before in this message, `NV` when it is an array inside the
    memory of one met before; NotData when it overlaps one only in part; else None."""
    number = current.numbers.get(id(value))
    if number is not None and current.values[number] is value:
        return ["NR", [number]]
    if type(value) is not np.ndarray or value.size == 0:
        return None
    low, high = _bounds(np, value)
    for number in current.owners.get(id(_owner(value)), ()):
        seen = current.values[number]
        if seen.size == 0:
            continue
        s_low, s_high = _bounds(np, seen)
        if high <= s_low or s_high <= low:
            continue
        if not (s_low <= low and high <= s_high) or value.dtype.hasobject or seen.dtype.hasobject:
            raise NotData("an array that shares memory with another in a way that does not cross")
        offset = value.__array_interface__["data"][0] - seen.__array_interface__["data"][0]
        return ["NV", _view_body(np, number, offset, value)]
    return None


def _view_body(np: Any, number: int, offset: int, value: Any) -> list[Any]:
    data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
    return [number, offset, value.dtype.str, list(value.shape), list(value.strides), bool(value.flags.writeable), data]


class _Interface:
    """An array interface at a place inside `base`'s memory (what `as_strided` makes, at an offset)."""

    def __init__(self, interface: dict[str, Any], base: Any) -> None:
        self.__array_interface__ = interface
        self.base = base


def _decode_view(np: Any, current: _Scope | None, body: Any) -> Any:
    if current is None or type(body) is not list or len(body) != 7:
        raise NotData("a view outside a call")
    number, offset, text, shape, strides, writeable, _data = body
    if type(number) is not int or not 0 <= number < len(current.values) or type(offset) is not int:
        raise NotData("malformed view")
    base = current.values[number]
    dtype = _dtype(np, text)
    _check_shape(shape)
    if (
        type(base) is not np.ndarray
        or base.dtype.hasobject
        or dtype.hasobject
        or base.size == 0
        or type(strides) is not list
        or len(strides) != len(shape)
        or any(type(s) is not int for s in strides)
        or type(writeable) is not bool
        or math.prod(shape) == 0
    ):
        raise NotData("malformed view")
    start = base.__array_interface__["data"][0] + offset
    low, high = start, start + dtype.itemsize
    for size, stride in zip(shape, strides, strict=True):
        if stride < 0:
            low += stride * (size - 1)
        else:
            high += stride * (size - 1)
    b_low, b_high = _bounds(np, base)
    if not (b_low <= low and high <= b_high):
        raise NotData("a view outside the memory of the array it names")
    interface = {
        "version": 3,
        "shape": tuple(shape),
        "typestr": dtype.str,
        "descr": dtype.descr,
        "data": (start, not base.flags.writeable),
        "strides": tuple(strides),
    }
    made = np.asarray(_Interface(interface, base))
    if not writeable:
        made.flags.writeable = False
    if _dump(_view_body(np, number, offset, made)) != _dump(body):
        raise NotData("a view that is not what it claims")
    current.add(made)
    return made


# -- the receiving side ------------------------------------------------------------------
def decode(tag: str, body: Any, depth: int, codec: Codec) -> Any:
    """Rebuild a value of this side's numpy/pandas from its wire form; NotData when malformed or
    when what it builds does not encode to the same form again. `item` decodes plain data only
    (an object array's elements, names, labels, attrs)."""
    current = _SCOPE.get()
    if tag == "NR":
        if current is None or type(body) is not list or len(body) != 1 or type(body[0]) is not int:
            raise NotData("malformed reference to an earlier value")
        if not 0 <= body[0] < len(current.values):
            raise NotData("a reference to a value not met")
        return current.values[body[0]]
    if tag == "NV":
        return _decode_view(_module("numpy"), current, body)
    with _no_scope():
        try:
            made = _decode(tag, body, depth, codec.decode)
            again = _encode(sys.modules["numpy"], made, depth, codec.encode)
        except NotData:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the libraries raise on a forged body
            raise NotData(f"malformed {tag} value ({type(exc).__name__})") from None
    if again is None or _dump(again) != _dump([tag, body]):
        raise NotData("a value that does not rebuild into its own form")
    if current is not None and mutable(made):
        current.add(made)
    return made


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


def _check_shape(shape: Any) -> None:
    if (
        type(shape) is not list
        or len(shape) > MAX_NDIM
        or any(type(d) is not int or not 0 <= d <= MAX_DIM for d in shape)
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
    if span > MAX_SPAN_FACTOR * size + MAX_SPAN_EXTRA:
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
        if text not in STRING_DTYPES or storage not in _STORAGES or array.dtype.kind != "O" or array.ndim != 1:
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
            or len(holidays) > MAX_HOLIDAYS
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
        if len(made) > MAX_DIM:
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
    if len(body[2]) != len(columns) or len(columns) > MAX_COLUMNS:
        raise NotData("malformed DataFrame")
    arrays = [_decode_values(pd, v, depth, item) for v in body[2]]
    if any(a.ndim != 1 or len(a) != len(index) for a in arrays):
        raise NotData("malformed DataFrame")
    # Built as pandas builds a frame from a dict of columns (consolidated: columns of one dtype
    # in one block), so `to_numpy()` of it is a view or a copy as it is of such a frame.
    frame = pd.DataFrame({i: a for i, a in enumerate(arrays)}, index=index)
    frame.columns = columns
    return frame


# -- argument mutation, carried back -------------------------------------------------------
def of_libraries(value: Any) -> bool:
    """Whether `value`'s type is numpy's or pandas' (compare it with `same`, never `==`)."""
    return _ours(value)


def form(value: Any, codec: Codec) -> str | None:
    """`value`'s full wire form as text (everything a test can observe that crosses), or None
    when it has none."""
    np = sys.modules.get("numpy")
    if np is None or not _ours(value):
        return None
    with _no_scope():
        try:
            made = _encode(np, value, 0, codec.encode)
        except (NotData, ValueError, TypeError, RecursionError):
            return None
    return None if made is None else _dump(made)


def same(original: Any, after: Any, codec: Codec) -> bool:
    """Whether two values of these types are equal in every respect that crosses (the same type
    and the same full wire form: dtype, shape, bytes, layout and flags, index, names, attrs);
    False for any other type."""
    if type(original) is not type(after) or not _ours(original):
        return False
    mine = form(original, codec)
    return mine is not None and mine == form(after, codec)


def sync(original: Any, after: Any, codec: Codec) -> bool:
    """Carry a candidate's in-place change of an array, Series, DataFrame or Index argument back
    to the test's object: True when `original` is of these types (changed or not), else False.
    Raises NotCarried naming what could not be changed in place to what the candidate left."""
    if not mutable(original):
        return False
    if type(original) is not type(after):
        raise NotCarried("type (it no longer crosses as data)")
    if same(original, after, codec):
        return True
    np = sys.modules["numpy"]
    pd = sys.modules.get("pandas")
    if type(original) is np.ndarray:
        _sync_array(np, original, after)
    elif pd is not None and isinstance(original, pd.Index):
        try:
            original.name = after.name
        except (TypeError, ValueError):
            raise NotCarried("name") from None
    else:
        _sync_frame(original, after)
    if not same(original, after, codec):
        raise NotCarried(_difference(original, after, codec))
    return True


def _sync_array(np: Any, original: Any, after: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("dtype", "shape", "strides"):
            if getattr(original, name) != getattr(after, name):
                try:
                    setattr(original, name, getattr(after, name))
                except (AttributeError, TypeError, ValueError):
                    raise NotCarried(name) from None
    if after.flags.writeable and not original.flags.writeable:
        try:
            original.flags.writeable = True
        except ValueError:
            raise NotCarried("writeable flag") from None
    if original.flags.writeable:
        original[...] = after
    if not after.flags.writeable:
        original.flags.writeable = False


def _sync_frame(original: Any, after: Any) -> None:
    name = getattr(after, "name", None)
    original._update_inplace(after)  # noqa: SLF001 - pandas' own in-place replacement (what inplace=True does)
    if not hasattr(original, "columns"):
        original.name = name
    try:
        original.flags.allows_duplicate_labels = after.flags.allows_duplicate_labels
    except ValueError:
        raise NotCarried("flags") from None
    original.attrs = dict(after.attrs)


def _difference(original: Any, after: Any, codec: Codec) -> str:
    """Which part of the two values' wire forms differs (for the abort's message)."""
    parts = {
        "NA": ("dtype", "shape", "values", "strides or flags"),
        "PS": ("values", "index", "name", "flags", "attrs"),
        "PF": ("columns", "index", "values", "flags", "attrs"),
        "PI": ("class", "name", "values", "freq"),
        "PR": ("start", "stop", "step", "name"),
    }
    a, b = form(original, codec), form(after, codec)
    if a is None or b is None:
        return "value"
    fa, fb = json.loads(a), json.loads(b)
    names = parts.get(fa[0], ())
    for i, name in enumerate(names):
        if fa[1][i] != fb[1][i]:
            return name
    return "value"
