"""Trusted side: candidate objects by handle.

An object a candidate call returns that is not plain data (an instance, a class, a generator)
stays in the candidate's process; the test gets a `Handle`. Attribute reads, method calls,
item access, iteration, ``len()``, ``bool()``, ``str()``, ``repr()``, operators and ``with``
are forwarded as requests, and what comes back is plain data (type-checked where Python
demands a type: an ``__len__`` that answers a str is a fault) or another handle. A handle can
be passed back to the candidate as an argument. Candidate classes (``from solution import
LRU``) are `RemoteClass`es: calling one constructs in the candidate's process, and
``isinstance(obj, LRU)`` asks the candidate.

A handle is what it stands for, or aborts: its class is generated from the candidate object's
type as the candidate process describes it (`wire.MAX_DESCRIPTION`): same name, exactly the
special methods the type defines and none it lacks, each called where the object lives with
the arguments Python passed and its answer returned as is (NotImplemented included), so
Python's own fallbacks (``math.floor`` through ``__float__``, ``bytes()`` through iteration)
run only when the real type has no method of its own; ``None`` where the type has None; the
standard library's ABCs the type is a subclass of (`wire.ABCS`) registered. What only the
candidate could answer, and could always answer in its own favour, is refused with
`HandleRefused`, an abort no ``pytest.raises`` can catch: ``==``, ``!=`` and ordering of a type
with its own, an overridden ``__class__`` (what ``isinstance`` asks), ``type(h)(...)``,
dataclasses' helpers. A type without its own ``__eq__`` compares by identity, which needs no
trust. An answer Python requires to be of a type (``__index__``, ``__fspath__``, ``__str__``)
that is not exactly that type is an abort: a subclass of it cannot cross as itself. A handle
lives as long as the candidate process that made it (one test, by default); using it later is a
fault (`StaleHandle`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, Protocol

from . import wire
from .faults import HandleRefused, NotPlainData


class CandidateSession(Protocol):
    """What a handle needs of the run's session (proxy.CandidateSession): no import of it here."""

    handle_types: dict[tuple[str, frozenset[str]], type[Handle]]
    #: Counts candidate processes (a handle of another generation is stale).
    generation: int

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

    def __delattr__(self, name: str) -> None:
        self._do("dunder", name, name="__delattr__")

    def __str__(self) -> str:
        value: str = _checked(self._do("str"), str, "__str__")
        return value

    def __repr__(self) -> str:
        value: str = _checked(self._do("repr"), str, "__repr__")
        return value

    def __format__(self, spec: str) -> str:
        value: str = _checked(self._do("dunder", spec, name="__format__"), str, "__format__")
        return value

    # Identity, as object.__eq__ has it: a type with its own __eq__ gets `_refuse` instead.
    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is not type(self) and not issubclass(type(other), Handle):
            return NotImplemented
        same: bool = _checked(self._do("same", other), bool, "identity")
        return same

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return NotImplemented if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        value: int = _checked(self._do("dunder", name="__hash__"), int, "__hash__")
        return value

    def __sizeof__(self) -> int:
        value: int = _checked(self._do("dunder", name="__sizeof__"), int, "__sizeof__")
        return value

    def __getstate__(self) -> Any:
        return self._do("dunder", name="__getstate__")

    def __dir__(self) -> list[str]:
        names = _checked(self._do("dunder", name="__dir__"), list, "__dir__")
        if any(type(n) is not str for n in names):
            _bad("__dir__", "something that is not a list of str")
        return list(names)

    # copy.copy and copy.deepcopy of a type without its own __copy__/__deepcopy__ go through
    # here (as for the real object, through its reduction): the copy is made where the object
    # lives, and the test gets a handle to it. pickle gets the token, which refuses.
    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (_copied, (_CopyOf(self, deep=False),))

    def __reduce__(self) -> tuple[Any, ...]:
        return self.__reduce_ex__(2)


#: Attributes with dunder names that are plain data on any object (forwarded as reads).
_DATA_DUNDERS = frozenset({"__name__", "__qualname__", "__dict__", "__annotations__", "__wrapped__"})

PICKLE_REFUSED = "a candidate object cannot be pickled: it lives in the candidate's process"


class _CopyOf:
    """What a handle's reduction holds: copied (deeply, once `copy.deepcopy` has copied it) where
    the object lives; never pickled."""

    __slots__ = ("deep", "handle")

    def __init__(self, handle: Handle, *, deep: bool) -> None:
        self.handle, self.deep = handle, deep

    def __deepcopy__(self, memo: Any) -> _CopyOf:
        return _CopyOf(self.handle, deep=True)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise HandleRefused(PICKLE_REFUSED)


def _copied(token: _CopyOf) -> Any:
    __tracebackhide__ = True
    if type(token) is not _CopyOf:
        raise HandleRefused(PICKLE_REFUSED)
    return token.handle._do("dunder", name="__deepcopy__" if token.deep else "__copy__")  # noqa: SLF001


def _forward(name: str, kind: type | tuple[type, ...] | None = None) -> Callable[..., Any]:
    """A special method as Python calls it, called on the object where it lives: the type's own
    method with the same arguments, its answer as it is (NotImplemented included), so Python goes
    on from it exactly as from the real one. With `kind`, an answer of another exact type is an
    abort (the real one could be a subclass of it, which cannot cross as itself)."""

    def method(self: Handle, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        value = self._do("dunder", *args, name=name, **kwargs)
        if kind is None or (value is NotImplemented and name == "__length_hint__"):
            return value
        return _checked(value, kind, name)

    method.__name__ = method.__qualname__ = name
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


def _exit_of(name: str) -> Callable[..., Any]:
    def method(self: Handle, exc_type: Any, exc: Any, tb: Any) -> Any:
        __tracebackhide__ = True
        from .faults import CallAborted

        if exc is None:
            return self._do("exit", None, name=name)
        if isinstance(exc, (CallAborted, AssertionError)) or not isinstance(exc, Exception):
            # The verifier's own aborts, pytest's outcomes and a failed assertion (the test's
            # judgement, which would also tell the candidate the expected value) are not the
            # candidate's to handle: a context manager of the candidate's never suppresses them.
            return False if name == "__exit__" else _not_suppressed()
        builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return self._do("exit", builtin.__name__, str(exc), name=name)

    method.__name__ = method.__qualname__ = name
    return method


async def _not_suppressed() -> bool:
    return False


def _deepcopy(self: Handle, memo: Any = None) -> Any:
    __tracebackhide__ = True
    return self._do("dunder", name="__deepcopy__")


def _refuse_class(self: Handle) -> NoReturn:
    raise HandleRefused(
        "the candidate object's type overrides __class__ or __getattribute__: what it says its class is "
        "(isinstance asks that) is the candidate's answer, which cannot be checked"
    )


def _refuse_dataclass(self: Handle) -> NoReturn:
    raise HandleRefused(
        "dataclasses' helpers (fields, asdict, astuple, replace) cannot read a candidate object: "
        "compare its attributes instead, e.g. `assert (p.x, p.y) == (1, 2)`"
    )


def _refuse_new(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
    raise HandleRefused(
        "a candidate object's type cannot be called through the object (type(obj)(...)): "
        "construct it through the candidate's class or function"
    )


class _Attribute:
    """A special name the type defines as a property or other attribute: read, set and deleted
    where the object lives."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return obj._do("getattr", name=self.name)  # noqa: SLF001

    def __set__(self, obj: Any, value: Any) -> None:
        obj._do("setattr", value, name=self.name)  # noqa: SLF001

    def __delete__(self, obj: Any) -> None:
        obj._do("dunder", self.name, name="__delattr__")  # noqa: SLF001


#: Special methods that go through their own request (the candidate process applies them as
#: Python does, and the answer is checked for what Python demands of it).
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
    "__exit__": _exit_of("__exit__"),
    "__aexit__": _exit_of("__aexit__"),
}
#: Special methods whose answer Python requires to be of a type (or its subclass, which cannot
#: cross as itself): an answer of any other exact type is an abort.
_TYPED: dict[str, type | tuple[type, ...]] = {
    "__int__": int, "__index__": int, "__float__": float, "__complex__": complex, "__bytes__": bytes,
    "__fspath__": (str, bytes), "__length_hint__": int, "__hash__": int, "__sizeof__": int,
    "__str__": str, "__repr__": str, "__format__": str, "__bool__": bool, "__len__": int,
}  # fmt: skip
_COMPARE = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
#: Special names a handle's class keeps as `Handle` has them, whatever the type says: its own
#: machinery (attribute access, layout, construction), what a class (not an object) of the
#: type has, and what `Handle` itself forwards for every object.
_OWN = frozenset({
    "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__init__", "__new__", "__del__", "__slots__",
    "__dict__", "__weakref__", "__class__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
    "__module__", "__doc__", "__qualname__", "__reduce__", "__reduce_ex__", "__getstate__", "__dir__",
    "__str__", "__repr__", "__format__", "__sizeof__", "__abstractmethods__", "__orig_bases__",
    "__parameters__", "__firstlineno__", "__static_attributes__", "__type_params__", "__classcell__",
    "__annotations__", "__match_args__", "__dataclass_params__", "__verifier__",
})  # fmt: skip
_ABC_MODULES = ("collections.abc", "numbers", "os", "io", "contextlib")
#: The class attribute in which a class of `valued` keeps, for each object it made, the handle
#: to the candidate object behind it.
INNER = "_verifier_inner"


def _abc(name: str) -> type | None:
    import importlib

    if name not in wire.ABCS:
        return None
    module, _, attr = name.rpartition(".")
    found = getattr(importlib.import_module(module), attr, None) if module in _ABC_MODULES else None
    return found if isinstance(found, type) else None


def _special(name: str) -> bool:
    return 4 < len(name) <= 100 and name.startswith("__") and name.endswith("__") and name[2:-2].isidentifier()


def described(wanted: frozenset[str], own: frozenset[str]) -> dict[str, str]:
    """The special names of a type's description (`wire.MAX_DESCRIPTION`) and what each is
    ("m", "n" or "p"), less the class' `own`."""
    defined: dict[str, str] = {}
    for entry in wanted:
        kind, _, name = entry.partition(":")
        if kind in ("m", "n", "p") and _special(name) and name not in own:
            defined[name] = kind
    return defined


def special_methods(defined: dict[str, str], wanted: frozenset[str]) -> dict[str, Any]:
    """What a stand-in's class has for each special name its type defines (`described`): forwarded
    to where the object lives, a comparison refused, None where the type has None; and
    ``__class__`` refused when the type answers it with code of its own (``"class"``)."""
    namespace: dict[str, Any] = {}
    for name, kind in defined.items():
        if kind == "n":
            namespace[name] = None  # as the type has it: Python's own TypeError (unhashable, not iterable)
        elif name in _COMPARE:
            namespace[name] = _refuse  # the candidate's own comparison: it could always say yes
        elif kind == "p":
            namespace[name] = _Attribute(name)
        elif name in _PROTOCOL_METHODS:
            namespace[name] = _PROTOCOL_METHODS[name]
        elif name == "__deepcopy__":
            namespace[name] = _deepcopy  # the memo is the test's: the copy is made where the object lives
        else:
            namespace[name] = _forward(name, _TYPED.get(name))
    if "class" in wanted:
        namespace["__class__"] = property(_refuse_class)
    if "__dataclass_fields__" in defined:
        # is_dataclass() answers as for the real type; fields(), asdict(), replace() would read
        # the candidate's Field objects, compared by identity with dataclasses' own: refused.
        namespace["__dataclass_fields__"] = property(_refuse_dataclass)
    return namespace


def handle_type(session: CandidateSession, type_name: str, protocols: list[str]) -> type[Handle]:
    """The trusted-side class of handles to candidate objects of one type: named like it, with
    exactly the special methods its type defines (`wire.MAX_DESCRIPTION`), registered with the
    standard library's ABCs it is a subclass of (cached per run)."""
    if len(protocols) > wire.MAX_DESCRIPTION:
        raise NotPlainData(f"the candidate object's type has more than {wire.MAX_DESCRIPTION} special names")
    safe = type_name if type_name.isidentifier() else "CandidateObject"
    wanted = frozenset(protocols)
    key = (safe, wanted)
    cls = session.handle_types.get(key)
    if cls is not None:
        return cls
    defined = described(wanted, _OWN)
    namespace: dict[str, Any] = {
        "__slots__": ("__weakref__",) if "weakref" in wanted else (),
        "__module__": "candidate",
        "__doc__": None,
        "__new__": _refuse_new,
        **special_methods(defined, wanted),
    }
    if defined.get("__eq__") in ("m", "p"):
        namespace["__ne__"] = _refuse  # object's != asks the type's own ==
        if "__hash__" not in defined:
            namespace["__hash__"] = Handle.__hash__
    if defined.get("__hash__") == "m":
        namespace["__hash__"] = Handle.__hash__
    cls = type(safe, (Handle,), namespace)
    _register(cls, wanted)
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
    handle: Handle = object.__new__(handle_type(session, type_name, protocols))
    Handle.__init__(handle, session, target, generation, type_name, methods)
    return handle


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
        if name == "__match_args__":  # class patterns (`case Point(x, y)`) read it from the class
            return cls._verifier_handle._do("getattr", name=name)  # noqa: SLF001
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._verifier_handle, name)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if sub is cls:
            return True
        if not isinstance(sub, RemoteClassMeta):
            return False  # a class of the trusted side is never a subclass of a candidate class
        h = cls._verifier_handle
        other = handle_of(sub)
        session, _, mine = parts(h)
        theirs = None if other is None else parts(other)[2]
        stale = {g for g in (mine, theirs) if g is not None and g != session.generation}
        if other is None or parts(other)[0] is not session or (mine != theirs and stale):
            # Classes of two candidate processes are unrelated objects (each process imported the
            # candidate anew); asking would reach a process that is gone. An ABC's registry asks
            # this of every class registered with it in the run, old ones included.
            return False
        answer: bool = _checked(parts(h)[0].request("issubclass", h, (sub,), {}), bool, "issubclass")
        return answer

    def __instancecheck__(cls, obj: Any) -> bool:
        if handle_of(obj) is None or issubclass(type(obj), RemoteClassMeta):
            return False  # plain data (or a class) is never an instance of a candidate class
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
    """The handle behind a candidate object or class as the tests hold it, or None (by its real
    type: a handle's ``__class__`` may be the candidate's to answer)."""
    if issubclass(type(obj), RemoteClassMeta):
        obj = obj._verifier_handle  # noqa: SLF001
    if issubclass(type(obj), Handle):
        handle: Handle = obj
        return handle
    table = vars(type(obj)).get(INNER)  # an object that is also a value (valued.py)
    entry = table.get(id(obj)) if type(table) is dict else None
    inner: Handle | None = entry[1] if entry is not None and entry[0] is obj else None
    return inner


def remote_class(handle: Handle, name: str, abcs: list[str] | None = None) -> type:
    """A trusted-side class standing for a candidate class, registered with the standard
    library's ABCs it is a subclass of (``"abc:NAME"`` entries, `wire.ABCS`)."""
    safe = name if name.isidentifier() else "CandidateClass"
    meta: dict[str, Any] = {}  # what its metaclass does (``meta:`` entries): an enum class' iteration
    for entry in abcs or []:
        prefix, _, rest = str(entry).partition(":")
        kind, _, special = rest.partition(":")
        if prefix == "meta" and special in wire.CLASS_PROTOCOLS and kind in ("m", "n"):
            method = _PROTOCOL_METHODS.get(special) or _forward(special, _TYPED.get(special))
            meta[special] = None if kind == "n" else method
    kind_of: type[RemoteClassMeta] = RemoteClassMeta if not meta else type(safe, (RemoteClassMeta,), meta)
    cls: type = kind_of(safe, (), {"__module__": "candidate", "__slots__": ()})
    type.__setattr__(cls, "_verifier_handle", handle)
    _register(cls, abcs or [])
    return cls


def _register(cls: type, entries: Any) -> None:
    for entry in entries:
        kind, _, name = str(entry).partition(":")
        abc = _abc(name) if kind == "abc" else None
        if abc is not None:
            abc.register(cls)  # type: ignore[attr-defined]


def _bad(what: str, got: str) -> NoReturn:
    raise NotPlainData(f"the candidate's {what} answered {got}")


def _checked(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if type(value) not in kinds:
        _bad(what, f"something that is not a {' or '.join(k.__name__ for k in kinds)}")
    return value
