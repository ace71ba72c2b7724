"""Identity and views within one message: a value met again (`NR`), an array inside an earlier
array's memory (`NV`) or inside the memory of an earlier pandas value (`NP`: `df.to_numpy()`,
`series.values`, `df.index.to_numpy()`), named on the way out and rebuilt on the way in."""

from __future__ import annotations

import base64
import math
from typing import Any

from .base import Aliased, NotData, _dump, _owner, _Scope
from .decoding import _check_shape, _dtype


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


#: The parts of a pandas value whose memory an array may be a view of, as `np.asarray` of each
#: gives it on both sides.
_PARTS = ("values", "index", "columns")


def _part(value: Any, part: Any) -> Any:
    """`value`'s part (itself for "values", a DataFrame's column by position), or None when it
    has no such part."""
    if part == "values":
        return value
    if type(part) is int:
        columns = getattr(value, "columns", None)
        return value.iloc[:, part] if columns is not None and 0 <= part < len(columns) else None
    return getattr(value, part, None) if part in _PARTS and hasattr(type(value), part) else None


def _parts(value: Any) -> list[Any]:
    """A value's parts, its columns first (a column keeps its layout whether or not pandas has
    consolidated the frame's blocks, which the receiver's frame may have done differently)."""
    columns = getattr(value, "columns", None)
    return [*range(len(columns) if columns is not None else 0), *_PARTS]


def _memory(np: Any, part: Any) -> list[Any]:
    """The numpy arrays a pandas Series, DataFrame or Index keeps its data in (pandas' own
    storage: a view of them shares the value's memory)."""
    mgr = getattr(part, "_mgr", None)
    held: list[Any] = list(getattr(mgr, "arrays", ())) if mgr is not None else [getattr(part, "_data", None)]
    out: list[Any] = []
    for array in held:
        inner: Any = getattr(array, "_ndarray", array)
        if type(inner) is np.ndarray and inner.size:
            out.append(inner)
    return out


def _inside(np: Any, array: Any, held: list[Any]) -> Any:
    """The array of `held` whose memory `array` overlaps (by owner and byte range), or None."""
    low, high = _bounds(np, array)
    owner = _owner(array)
    for one in held:
        if _owner(one) is not owner:
            continue
        h_low, h_high = _bounds(np, one)
        if low < h_high and h_low < high:
            return one
    return None


def _in_pandas(np: Any, current: _Scope, value: Any) -> Any:
    """`NP` when the array `value` lies inside the memory of a pandas value met before in this
    message, as a view of `np.asarray` of that value's part; `Aliased` when it shares that memory
    in a way that cannot cross as such a view; None when it shares none."""
    if type(value) is not np.ndarray or value.size == 0 or value.dtype.hasobject:
        return None  # an object array crosses as a copy (docs/suites.md: numpy builds no view of one)
    low, high = _bounds(np, value)
    for number in current.pandas:
        seen = current.values[number]
        shared = None
        for part in _parts(seen):
            piece = _part(seen, part)
            if piece is None or _inside(np, value, _memory(np, piece)) is None:
                continue
            shared = part
            whole = np.asarray(piece)
            if (
                type(whole) is np.ndarray
                and whole.size
                and not whole.dtype.hasobject
                and _owner(whole) is _owner(value)
                and _bounds(np, whole)[0] <= low
                and high <= _bounds(np, whole)[1]
            ):
                offset = value.__array_interface__["data"][0] - whole.__array_interface__["data"][0]
                layout = [whole.dtype.str, list(whole.shape), list(whole.strides)]
                return ["NP", [number, part, layout, *_view_body(np, number, offset, value)[1:]]]
        if shared is not None:
            raise Aliased(
                f"an array inside the memory of a pandas {type(seen).__name__}, not as a view of a part of it"
            )
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
    number, offset = body[0], body[1]
    if type(number) is not int or not 0 <= number < len(current.values) or type(offset) is not int:
        raise NotData("malformed view")
    made = _view_on(np, current.values[number], offset, body[2:])
    if _dump(_view_body(np, number, offset, made)) != _dump(body):
        raise NotData("a view that is not what it claims")
    current.add(made)
    return made


def _decode_pandas_view(np: Any, current: _Scope | None, body: Any) -> Any:
    """`NP`: a view of `np.asarray` of a part of a pandas value met before, built on this side's
    value (the test's own object), whose part must hold its data in the same layout; else
    `Aliased` (the call aborts: a copy would not share the value's memory as the real one does)."""
    if current is None or type(body) is not list or len(body) != 9:
        raise NotData("a view outside a call")
    number, part, layout, offset = body[:4]
    if (
        type(number) is not int
        or number not in current.pandas
        or (part not in _PARTS and type(part) is not int)
        or type(layout) is not list
        or type(offset) is not int
    ):
        raise NotData("malformed view")
    seen = current.values[number]
    piece = _part(seen, part)
    whole = None if piece is None else np.asarray(piece)
    if (
        whole is None
        or type(whole) is not np.ndarray
        or whole.dtype.hasobject
        or [whole.dtype.str, list(whole.shape), list(whole.strides)] != layout
        or _inside(np, whole, _memory(np, piece)) is None
    ):
        raise Aliased(
            f"an array inside the memory of a pandas {type(seen).__name__}'s {part}, which holds its data "
            "in another layout here"
        )
    made = _view_on(np, whole, offset, body[4:])
    if _dump([number, part, layout, *_view_body(np, number, offset, made)[1:]]) != _dump(body):
        raise Aliased(f"a view of a pandas {type(seen).__name__}'s {part} whose flags or bytes differ here")
    current.add(made)
    return made


def _view_on(np: Any, base: Any, offset: int, rest: list[Any]) -> Any:
    """The view `rest` (dtype, shape, strides, writeable, data) at `offset` in `base`'s memory,
    checked to lie inside it."""
    text, shape, strides, writeable, _data = rest
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
    return made
