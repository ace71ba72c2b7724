"""An argument's in-place change carried back to the test's own object (`sync`), decided on the
full wire form (`form`, `same`), or `NotCarried` naming what could not be carried."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from .base import Codec, NotCarried, NotData, _dump, _no_scope, _ours, mutable
from .encoding import _encode


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
