"""Trusted side: an argument the candidate changed in place, carried back to the test's own
object. Lists, dicts and sets (and tuples holding them) are updated where they differ;
numpy/pandas values through `scidata.sync`; a handle is never asked anything.
"""

from __future__ import annotations

from typing import Any

from . import scidata, wire
from .handles import handle_of, parts


def has_mutable(value: Any) -> bool:
    # By the real type: a handle's `__class__` may be the candidate's to answer. A candidate
    # object (a handle, or one that is also a value: valued.py) crosses by reference.
    if handle_of(value) is not None:
        return False
    if issubclass(type(value), (list, dict, set)) or (handle_of(value) is None and scidata.mutable(value)):
        return True
    if issubclass(type(value), tuple):
        return any(has_mutable(v) for v in value)
    return False


def _same(o: Any, a: Any) -> bool:
    """Whether the test's value `o` already equals the candidate's `a` (never asking a handle)."""
    ho, ha = handle_of(o), handle_of(a)
    if ho is not None or ha is not None:
        return ho is not None and ha is not None and parts(ho)[1] == parts(ha)[1]
    if scidata.of_libraries(o):
        return scidata.same(o, a, wire.PLAIN)  # never `==`: an array's answers elementwise
    return type(o) is type(a) and o == a


def sync_in_place(original: Any, after: Any) -> None:
    """Carry the candidate's in-place mutation of an argument back to the test's object."""
    if type(original) is list and type(after) is list:
        if len(original) == len(after):
            for i, (o, a) in enumerate(zip(original, after, strict=True)):
                if scidata.sync(o, a, wire.PLAIN):
                    continue  # an array, Series or DataFrame: changed in place, as numpy/pandas can
                if type(o) in (list, dict, set) and type(o) is type(a):
                    sync_in_place(o, a)
                elif type(o) is tuple and type(a) is tuple and has_mutable(o):
                    sync_in_place(list(o), list(a))
                elif not _same(o, a):
                    original[i] = a
        else:
            original[:] = after
    elif type(original) is dict and type(after) is dict:
        for key in list(original):
            if key not in after:
                del original[key]
        for key, a in after.items():
            o = original.get(key, _MISSING)
            if scidata.sync(o, a, wire.PLAIN):
                continue
            if type(o) in (list, dict, set) and type(o) is type(a):
                sync_in_place(o, a)
            elif o is _MISSING or not _same(o, a):
                original[key] = a
    elif type(original) is set and type(after) is set and original != after:
        original.clear()
        original.update(after)


_MISSING = object()
