"""Trusted side: candidate objects by handle.

An object a candidate call returns that is not plain data (an instance, a class, a generator)
stays in the candidate's process; the test gets a `Handle`. Attribute reads, method calls,
item access, iteration, ``len()``, ``bool()``, ``str()``, ``repr()``, operators and ``with``
are forwarded as requests, and what comes back is plain data (type-checked where Python
demands a type: an ``__len__`` that answers a str is a fault) or another handle. A handle can
be passed back to the candidate as an argument. Candidate classes (``from solution import
LRU``) are `RemoteClass`es: calling one constructs in the candidate's process, and
``isinstance(obj, LRU)`` asks the candidate.

A handle is what it stands for, or aborts: its class is made for the candidate object's type
(same name) and has exactly the protocols that type has (the candidate process lists them), so
``callable()``, ``iter()``, ``len()``, ``hash()``, ``collections.abc`` checks and operators
answer as the object would. What only the candidate could answer, and could always answer in
its own favour, is refused with `HandleRefused`, an abort no ``pytest.raises`` can catch:
``==`` and ordering of a type with its own ``__eq__`` / ``<``. A type without its own ``__eq__``
compares by identity, which needs no trust. A handle lives as long as the candidate process
that made it (one test, by default); using it later is a fault (`StaleHandle`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, Protocol

from . import wire
from .faults import HandleRefused, NotPlainData


class CandidateSession(Protocol):
    """What a handle needs of the run's session (proxy.CandidateSession): no import of it here."""

    handle_types: dict[tuple[str, frozenset[str]], type[Handle]]

    def request(
        self, op: str, target: Handle | list[Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, name: str = ""
    ) -> Any: ...


REFUSED = (
    "a candidate object cannot be compared (==, <, ...): its type's own comparison runs in the candidate and "
    "could always say yes. Compare plain values instead, e.g. `assert obj.value() == 3`."
)

#: pytest leaves this module's frames out of a failure's text (it reads `__tracebackhide__` from
#: a frame's globals too): they are the verifier's, not the test's or the candidate's doing.
__tracebackhide__ = True


def _refuse(*_: object) -> NoReturn:
    raise HandleRefused(REFUSED)


class Handle:
    """A candidate object, seen from the tests (see `handle_type` for the class a handle has)."""

    __slots__ = ("_verifier_generation", "_verifier_methods", "_verifier_session", "_verifier_target", "_verifier_type")

    def __init__(
        self, session: CandidateSession, target: list[Any], generation: int | None, type_name: str, methods: list[str]
    ) -> None:
        object.__setattr__(self, "_verifier_session", session)
        object.__setattr__(self, "_verifier_target", target)
        object.__setattr__(self, "_verifier_generation", generation)
        object.__setattr__(self, "_verifier_type", type_name)
        object.__setattr__(self, "_verifier_methods", frozenset(methods))

    def _do(self, op: str, *args: Any, name: str = "", **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return self._verifier_session.request(op, self, args, kwargs, name=name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name not in _DATA_DUNDERS:
            raise AttributeError(name)
        if name in self._verifier_methods:
            return _Method(self, name)
        return self._do("getattr", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._do("setattr", value, name=name)

    def __str__(self) -> str:
        value: str = _checked(self._do("str"), str, "__str__")
        return value

    def __repr__(self) -> str:
        value: str = _checked(self._do("repr"), str, "__repr__")
        return value

    # Identity, as object.__eq__ has it: a type with its own __eq__ gets `_refuse` instead.
    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Handle):
            return NotImplemented
        same: bool = _checked(self._do("same", other), bool, "identity")
        return same

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return NotImplemented if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        value: int = _checked(self._do("dunder", name="__hash__"), int, "__hash__")
        return value

    # Copies are made where the object lives; the test gets a handle to the copy.
    def __copy__(self) -> Any:
        return self._do("dunder", name="__copy__")

    def __deepcopy__(self, memo: Any) -> Any:
        return self._do("dunder", name="__deepcopy__")

    def __dir__(self) -> list[str]:
        names = _checked(self._do("dunder", name="__dir__"), list, "__dir__")
        if any(type(n) is not str for n in names):
            _bad("__dir__", "something that is not a list of str")
        return list(names)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise HandleRefused("a candidate object cannot be pickled: it lives in the candidate's process")


#: Attributes with dunder names that are plain data on any object (forwarded as reads).
_DATA_DUNDERS = frozenset({"__name__", "__qualname__", "__dict__", "__annotations__", "__wrapped__"})


def _unary(name: str, kind: type | None) -> Callable[..., Any]:
    def method(self: Handle, *args: Any) -> Any:
        __tracebackhide__ = True
        value = self._do("dunder", *args, name=name)
        return value if kind is None else _checked(value, kind, name)

    method.__name__ = name
    return method


def _binary(name: str) -> Callable[..., Any]:
    def method(self: Handle, other: Any) -> Any:
        __tracebackhide__ = True
        return self._do("dunder", other, name=name)

    method.__name__ = name
    return method


def _len(self: Handle) -> int:
    value: int = _checked(self._do("len"), int, "__len__")
    if value < 0:
        _bad("__len__", "a negative number")
    return value


def _bool(self: Handle) -> bool:
    value: bool = _checked(self._do("bool"), bool, "__bool__")
    return value


def _contains(self: Handle, item: Any) -> bool:
    answer: bool = _checked(self._do("contains", item), bool, "__contains__")
    return answer


def _call(self: Handle, *args: Any, **kwargs: Any) -> Any:
    __tracebackhide__ = True
    return self._do("call", *args, **kwargs)


def _exit(self: Handle, exc_type: Any, exc: Any, tb: Any) -> bool:
    __tracebackhide__ = True
    from .faults import CallAborted

    if exc is None:
        return bool(self._do("exit", None))
    if isinstance(exc, CallAborted) or not isinstance(exc, Exception):
        return False  # the verifier's own aborts (and pytest's outcomes) are not the candidate's to handle
    builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
    suppress: bool = _checked(self._do("exit", builtin.__name__, str(exc)), bool, "__exit__")
    return suppress


_TYPED = {"__int__": int, "__float__": float, "__complex__": complex, "__index__": int, "__format__": str}

_PROTOCOL_METHODS: dict[str, Callable[..., Any]] = {
    "__len__": _len,
    "__bool__": _bool,
    "__contains__": _contains,
    "__iter__": lambda self: self._do("iter"),
    "__next__": lambda self: self._do("next"),
    "__getitem__": lambda self, key: self._do("getitem", key),
    "__setitem__": lambda self, key, value: self._do("setitem", key, value),
    "__delitem__": lambda self, key: self._do("delitem", key),
    "__call__": _call,
    "__exit__": _exit,
}


def handle_type(session: CandidateSession, type_name: str, protocols: list[str]) -> type[Handle]:
    """The trusted-side class of handles to candidate objects of one type: named like it, with
    exactly its protocols (cached per run)."""
    wanted = frozenset(p for p in protocols if p in wire.PROTOCOLS and p not in wire.EVERY_OBJECT)
    safe = type_name if type_name.isidentifier() else "CandidateObject"
    key = (safe, wanted)
    cls = session.handle_types.get(key)
    if cls is not None:
        return cls
    namespace: dict[str, Any] = {"__slots__": (), "__module__": "candidate", "__doc__": None}
    for name in wanted:
        if name == "__hash__":
            continue  # Handle.__hash__ forwards it; "unhashable" below removes it
        if name in _PROTOCOL_METHODS:
            namespace[name] = _PROTOCOL_METHODS[name]
        elif name in wire.UNARY:
            namespace[name] = _unary(name, _TYPED.get(name))
        elif name in wire.DUNDERS:
            namespace[name] = _binary(name)
    if "eq" in wanted:
        namespace["__eq__"] = namespace["__ne__"] = _refuse
        # A type with its own __eq__ and a __hash__: the hash is the candidate's plain int.
        namespace["__hash__"] = None if "unhashable" in wanted else Handle.__hash__
    if "unhashable" in wanted:
        namespace["__hash__"] = None
    if "order" in wanted:
        namespace["__lt__"] = namespace["__le__"] = namespace["__gt__"] = namespace["__ge__"] = _refuse
    cls = type(safe, (Handle,), namespace)
    session.handle_types[key] = cls
    return cls


def make_handle(
    session: CandidateSession,
    target: list[Any],
    generation: int | None,
    type_name: str,
    methods: list[str],
    protocols: list[str],
) -> Handle:
    return handle_type(session, type_name, protocols)(session, target, generation, type_name, methods)


class _Method:
    """`handle.method`, called in one round trip (`callattr`)."""

    __slots__ = ("handle", "name")

    def __init__(self, handle: Handle, name: str) -> None:
        self.handle, self.name = handle, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return parts(self.handle)[0].request("callattr", self.handle, args, kwargs, name=self.name)

    def __repr__(self) -> str:
        return f"<candidate method {self.name}>"

    __eq__ = __ne__ = __hash__ = _refuse  # type: ignore[assignment]


class RemoteClassMeta(type):
    """The type of candidate classes on the trusted side: calling constructs remotely, and
    ``isinstance`` asks the candidate."""

    _verifier_handle: Handle

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        h = cls._verifier_handle
        return parts(h)[0].request("call", h, args, kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._verifier_handle, name)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if sub is cls:
            return True
        if not isinstance(sub, RemoteClassMeta):
            return False  # a class of the trusted side is never a subclass of a candidate class
        h = cls._verifier_handle
        answer: bool = _checked(parts(h)[0].request("issubclass", h, (sub,), {}), bool, "issubclass")
        return answer

    def __instancecheck__(cls, obj: Any) -> bool:
        if not isinstance(obj, Handle):
            return False  # plain data is never an instance of a candidate class
        h = cls._verifier_handle
        answer: bool = _checked(parts(h)[0].request("isinstance", h, (obj,), {}), bool, "isinstance")
        return answer

    def __repr__(cls) -> str:
        return f"<candidate class {cls.__name__}>"

    # A class is equal to itself alone (no candidate code runs): Hypothesis' `st.builds(LRU)`
    # asks `LRU in (type, object)` while it reads the signature.
    def __eq__(cls, other: object) -> bool:
        return cls is other

    def __ne__(cls, other: object) -> bool:
        return cls is not other

    __hash__ = type.__hash__  # classes stay usable in pytest.raises, dict keys of the trusted side


def parts(handle: Handle) -> tuple[CandidateSession, list[Any], int | None]:
    """(session, reference, generation) of a handle: what the session needs to send it back."""
    return handle._verifier_session, handle._verifier_target, handle._verifier_generation  # noqa: SLF001


def handle_of(obj: Any) -> Handle | None:
    """The handle behind a candidate object or class as the tests hold it, or None."""
    if isinstance(obj, RemoteClassMeta):
        obj = obj._verifier_handle  # noqa: SLF001
    return obj if isinstance(obj, Handle) else None


def remote_class(handle: Handle, name: str) -> type:
    """A trusted-side class standing for a candidate class."""
    safe = name if name.isidentifier() else "CandidateClass"
    cls = RemoteClassMeta(safe, (), {"__module__": "candidate", "__slots__": ()})
    type.__setattr__(cls, "_verifier_handle", handle)
    return cls


def _bad(what: str, got: str) -> NoReturn:
    raise NotPlainData(f"the candidate's {what} answered {got}")


def _checked(value: Any, kind: type, what: str) -> Any:
    if type(value) is not kind:
        _bad(what, f"something that is not a {kind.__name__}")
    return value
