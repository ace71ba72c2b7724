"""Trusted side: candidate objects that are also values (issue 32).

An instance of a candidate's subclass of an immutable builtin (a ``namedtuple``, an ``IntEnum``
or ``StrEnum`` member, a ``str``, ``int``, ``float``, ``complex``, ``bytes``, ``tuple`` or
``frozenset`` subclass) is two things at once: a candidate object, whose methods and attributes
are the candidate's code and state, and a builtin value, which C code reads directly (``"a" +
s``, ``json.dumps``, ``"%s" % t``, ``struct``, ``hashlib``, ``isinstance(x, str)``) without
asking any method. A plain `Handle` could stand for the first and not the second.

So such an object crosses as both: the candidate process sends the builtin value it holds (read
through the builtin's own C slots, never the subclass' methods), and the tests get an instance of
a class generated here, a subclass of that same builtin, holding exactly that value (immutable:
it cannot change later where the object lives), together with a handle to the object:

- every attribute that is not a special name (``p.x``, ``e.name``, ``s.upper()``) is read or
  called where the object lives, so instance state and methods answer as they do there;
- a special method the candidate's class overrides (anything its class finds before the
  builtin's own, such as an enum's ``__repr__``) is forwarded as a handle forwards it, and an
  overridden comparison or ``__hash__`` is refused as a handle refuses it; one it does not
  override is the builtin's own, on the exact value, as it is for the real object;
- ``dir()``, ``vars()``, ``sys.getsizeof``, ``copy`` and ``pickle`` go where the object lives,
  as for a handle; passing the object back to the candidate passes the object itself.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import wire
from .faults import NotPlainData
from .handles import (
    _DATA_DUNDERS,
    _OWN,
    INNER,
    Handle,
    _copied,
    _CopyOf,
    _forward,
    _refuse_new,
    _register,
    _special,
    described,
    special_methods,
)

#: The builtins whose subclasses' instances cross as values and objects at once (by name on the
#: wire). bool cannot be subclassed; mutable builtins (list, dict, bytearray) cannot be copied
#: without losing what a later change in place would show.
BASES: dict[str, type] = {
    t.__name__: t for t in (str, int, float, complex, bytes, tuple, frozenset)
}  # fmt: skip
#: What the generated class always has of its own: `Handle`'s own names, less the three a value
#: answers with its builtin's methods unless its class overrides them.
_VALUED_OWN = _OWN - {"__str__", "__repr__", "__format__"}


class ValuedSession(Protocol):
    """What this module needs of the run's session (proxy.CandidateSession)."""

    valued_types: dict[tuple[str, str, frozenset[str]], type]


def _inner(obj: Any) -> Handle:
    handle: Handle = vars(type(obj))[INNER][id(obj)][1]
    return handle


def _getattribute(self: Any, name: str) -> Any:
    __tracebackhide__ = True
    if name == "_do" or (_special(name) and name not in _DATA_DUNDERS):
        return object.__getattribute__(self, name)
    return getattr(_inner(self), name)


def _do(self: Any, op: str, *args: Any, name: str = "", **kwargs: Any) -> Any:
    __tracebackhide__ = True
    return _inner(self)._do(op, *args, name=name, **kwargs)  # noqa: SLF001


def _setattr(self: Any, name: str, value: Any) -> None:
    _inner(self)._do("setattr", value, name=name)  # noqa: SLF001


def _delattr(self: Any, name: str) -> None:
    _inner(self)._do("dunder", name, name="__delattr__")  # noqa: SLF001


def _dir(self: Any) -> list[str]:
    return Handle.__dir__(_inner(self))


def _reduce_ex(self: Any, protocol: Any = 2) -> tuple[Any, ...]:
    return (_copied, (_CopyOf(_inner(self), deep=False),))


def valued_type(session: ValuedSession, base: type, type_name: str, protocols: list[str]) -> type:
    """The trusted-side class of one candidate type that subclasses `base` (cached per run)."""
    if len(protocols) > wire.MAX_DESCRIPTION:
        raise NotPlainData(f"the candidate object's type has more than {wire.MAX_DESCRIPTION} special names")
    safe = type_name if type_name.isidentifier() else "CandidateObject"
    wanted = frozenset(protocols)
    key = (safe, base.__name__, wanted)
    cls = session.valued_types.get(key)
    if cls is not None:
        return cls
    namespace: dict[str, Any] = {
        "__module__": "candidate",
        "__doc__": None,
        "__new__": _refuse_new,
        "__getattribute__": _getattribute,
        "__setattr__": _setattr,
        "__delattr__": _delattr,
        "__dir__": _dir,
        "__sizeof__": _forward("__sizeof__", int),
        "__getstate__": _forward("__getstate__"),
        "__reduce_ex__": _reduce_ex,
        "__reduce__": _reduce_ex,
        "_do": _do,
        INNER: {},
    }
    # Weak references as the real class has them: frozenset has its own; a subclass of int, bytes
    # or tuple can have none (a description that says otherwise is not believed).
    weak = "weakref" in wanted and not base.__weakrefoffset__ and not base.__itemsize__
    namespace["__slots__"] = ("__weakref__",) if weak else ()
    defined = described(wanted, _VALUED_OWN)
    namespace.update(special_methods(defined, wanted))
    if "__eq__" in namespace and "__hash__" not in namespace:
        namespace["__hash__"] = base.__hash__  # what the real class finds; type() would set None
    cls = type(safe, (base,), namespace)
    _register(cls, wanted)
    session.valued_types[key] = cls
    return cls


def make_valued(
    session: ValuedSession, handle: Handle, base_name: Any, value: Any, type_name: str, protocols: list[str]
) -> Any:
    """The object the tests get: `value` (exactly of the builtin named `base_name`) as an instance
    of the generated class, standing for the candidate object behind `handle`."""
    base = BASES.get(base_name) if type(base_name) is str else None
    if base is None or type(value) is not base:
        raise wire.BadWireValue("malformed reference")
    cls = valued_type(session, base, type_name, protocols)
    made = base.__new__(cls, value)  # type: ignore[call-overload]
    # The class keeps what it made (and so its id) for the run: one handle for each.
    vars(cls)[INNER][id(made)] = (made, handle)
    return made
