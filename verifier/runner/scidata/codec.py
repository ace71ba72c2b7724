"""The codec's two doors, each with its round trip: `encode` (what does not rebuild exactly stays a
handle) and `decode` (what does not encode back to the bytes received is refused)."""

from __future__ import annotations

import sys
from typing import Any

from .base import _SCOPE, Codec, NotData, _dump, _module, _no_scope, _ours, mutable
from .decoding import _decode
from .encoding import _encode
from .views import _decode_pandas_view, _decode_view, _in_pandas, _named


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
            named = _named(np, current, value) or _in_pandas(np, current, value)
            if named is not None:
                if named[0] in ("NV", "NP"):
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
    if tag == "NP":
        return _decode_pandas_view(_module("numpy"), current, body)
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
