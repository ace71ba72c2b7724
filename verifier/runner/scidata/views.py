"""Identity and views within one message: a value met again (`NR`), an array inside an earlier
array's memory (`NV`), named on the way out and rebuilt on the way in."""

from __future__ import annotations

import base64
import math
from typing import Any

from .base import NotData, _dump, _owner, _Scope
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
