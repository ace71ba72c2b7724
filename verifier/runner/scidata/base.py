"""What the numpy/pandas codec's parts share: its tags and bounds, its errors, the scope of one
message's values, and the plain-data codec it is handed (`Codec`)."""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Wire tags of this codec (`wire.encode` / `wire.decode` hand these to it).
TAGS = frozenset({"NA", "NS", "PI", "PR", "PS", "PF", "NR", "NV", "NP"})


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


class Aliased(NotData):
    """An array inside the memory of a pandas value of the same message that cannot cross as a
    view of that value's own memory on the other side (another block layout there, an object
    dtype): crossing as a copy would answer `np.shares_memory` and its flags differently, so the
    call aborts (never a handle, never a copy)."""


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
        #: The numbers of the pandas values met (an array in their memory crosses as `NP`).
        self.pandas: list[int] = []
        for value in known:
            self.add(value)

    def add(self, value: Any) -> None:
        number = len(self.values)
        self.values.append(value)  # kept alive: its id stays its own
        self.numbers.setdefault(id(value), number)
        if _is_array(value):
            self.owners.setdefault(id(_owner(value)), []).append(number)
        elif mutable(value):
            self.pandas.append(number)


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


def _ours(value: Any) -> bool:
    return type(value).__module__.partition(".")[0] in ("numpy", "pandas")
