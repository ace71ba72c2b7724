"""Trusted side: candidate objects by handle.

An object a candidate call returns that is not plain data (an instance, a class, a generator)
stays in the candidate's process; the test gets a `Handle`. Attribute reads, method calls,
item access, iteration, ``len()``, ``bool()``, ``str()`` and ``repr()`` are forwarded as
requests, and what comes back is plain data (type-checked where Python demands a type: an
``__len__`` that answers a str is a fault) or another handle. A handle can be passed back to
the candidate as an argument. Candidate classes (``from solution import LRU``) are
`RemoteClass`es: calling one constructs in the candidate's process, and ``isinstance(obj,
LRU)`` asks the candidate.

Comparison is never forwarded: ``handle == value``, ordering and hashing raise
`HandleCompared`, because a candidate's ``__eq__`` could always say yes. Compare plain values
instead (``cache.get(1) == 1``). A handle lives as long as the candidate process that made it
(one test, by default); using it later is a fault (`StaleHandle`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from .proxy import CandidateSession

MAX_TEXT = 100_000


class HandleCompared(TypeError):
    """A test compared or hashed a candidate object: its answer would be the candidate's."""


def _refuse(*_: object) -> NoReturn:
    raise HandleCompared(
        "a candidate object cannot be compared (==, <, ...) or hashed: its __eq__ runs in the candidate "
        "and could always say yes. Compare plain values instead, e.g. `assert obj.value() == 3`."
    )


class Handle:
    """A candidate object, seen from the tests."""

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
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._verifier_methods:
            return _Method(self, name)
        return self._do("getattr", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._do("setattr", value, name=name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return self._do("call", *args, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._do("getitem", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._do("setitem", key, value)

    def __delitem__(self, key: Any) -> None:
        self._do("delitem", key)

    def __contains__(self, item: Any) -> bool:
        answer: bool = _checked(self._do("contains", item), bool, "__contains__")
        return answer

    def __iter__(self) -> Any:
        return self._do("iter")

    def __next__(self) -> Any:
        return self._do("next")

    def __len__(self) -> int:
        value: int = _checked(self._do("len"), int, "__len__")
        if value < 0:
            _bad("__len__", "a negative number")
        return value

    def __bool__(self) -> bool:
        value: bool = _checked(self._do("bool"), bool, "__bool__")
        return value

    def __str__(self) -> str:
        value: str = _checked(self._do("str"), str, "__str__")
        return value[:MAX_TEXT]

    def __repr__(self) -> str:
        value: str = _checked(self._do("repr"), str, "__repr__")
        return value[:MAX_TEXT]

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse  # type: ignore[assignment]
    __hash__ = _refuse  # type: ignore[assignment]


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
        return cls._verifier_handle(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._verifier_handle, name)

    def __instancecheck__(cls, obj: Any) -> bool:
        if not isinstance(obj, Handle):
            return False  # plain data is never an instance of a candidate class
        h = cls._verifier_handle
        answer: bool = _checked(parts(h)[0].request("isinstance", h, (obj,), {}), bool, "isinstance")
        return answer

    def __repr__(cls) -> str:
        return f"<candidate class {cls.__name__}>"

    __eq__ = __ne__ = _refuse  # type: ignore[assignment]
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
    from .proxy import NotPlainData

    raise NotPlainData(f"the candidate's {what} answered {got}")


def _checked(value: Any, kind: type, what: str) -> Any:
    if type(value) is not kind:
        _bad(what, f"something that is not a {kind.__name__}")
    return value
