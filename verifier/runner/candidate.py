"""The candidate process: imports the candidate's modules and answers requests with plain data.

Everything here runs beside untrusted code and may be subverted by it; that is fine,
because all that leaves this process is bytes that the trusted side checks and decodes into
builtin values or its own handles. Nothing here is trusted, and nothing here limits anything:
the trusted side enforces sizes and deadlines on what it receives.

Objects that are not plain data (instances, classes, generators, bound methods) stay here, in
a table; the trusted side gets a reference ["H", [id, type name, kind, method names]] and
sends requests naming it: call, callattr, getattr, setattr, getitem, setitem, delitem,
contains, iter, next, len, bool, str, repr, isinstance. Module attributes are named
["N", [module, name]], so they mean the same in every candidate process of a run.
"""

from __future__ import annotations

import builtins
import copy
import importlib
import operator
import os
import socket
import sys
import traceback
import types
import warnings
from collections.abc import Callable
from typing import Any

from . import scidata, wire
from .newborn import keep_only_descriptors, say_ready

MAX_TEXT = 4000
#: Requests come from the trusted side; this only bounds what this process reads.
REQUEST_LIMIT = 256 * 1024**2
MAX_METHODS = 200


def _text(obj: object) -> str:
    try:
        return str(obj)[:MAX_TEXT]
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        return "<unprintable>"


def _class_ref(cls: type) -> Any:
    return (
        cls.__name__ if cls.__module__ == "builtins" else [_text(cls.__module__)[:200], _text(cls.__qualname__)[:200]]
    )


def _class_payload(cls: type) -> dict[str, Any]:
    """A class as the trusted side rebuilds it: its builtin ancestors by name, and the others
    (the candidate's own, the standard library's) by module, qualified name and direct bases,
    nearest first."""
    mro = getattr(cls, "__mro__", (cls,))
    return {
        "mro": [c.__name__ for c in mro if c.__module__ == "builtins"],
        "classes": [
            [*_class_ref(c), [_class_ref(b) for b in c.__bases__][:8]] for c in mro if c.__module__ != "builtins"
        ][: wire.MAX_CLASSES],
    }


def _plain_or_none(value: Any, objects: Objects | None) -> Any:
    """`value` encoded, or None when it is not plain data or is larger than an exception's
    arguments or attributes should be (its str() still crosses, bounded)."""
    try:
        encoded = wire.encode(value, refer=None if objects is None else objects.refer)
    except (wire.BadWireValue, RecursionError):
        return None
    return encoded if len(wire.dumps(encoded)) <= wire.MAX_EXCEPTION_DATA else None


def _exception_payload(exc: BaseException, objects: Objects | None = None, depth: int = 0) -> dict[str, Any]:
    payload: dict[str, Any] = {"raised": _text(type(exc).__name__)[:200], "message": _text(exc)}
    payload.update(_class_payload(type(exc)))
    args = _plain_or_none(list(exc.args), objects)
    if args is not None:
        payload["args"] = args
    else:
        payload["lost"] = "args"
    try:
        notes = vars(exc).get("__notes__", _MISSING)
    except TypeError:
        notes = _MISSING
    if notes is not _MISSING:  # PEP 678: pytest.raises(match=...) reads them
        encoded_notes = _plain_or_none(notes, objects)
        if encoded_notes is None and notes is not None:
            payload["lost"] = "__notes__"
        else:
            payload["notes"] = encoded_notes
    members: dict[str, Any] = {}
    for name in _members(type(exc)):
        try:
            value = getattr(exc, name)
        except Exception:  # noqa: BLE001 - a member not set (OSError.characters_written)
            continue
        encoded_member = _plain_or_none(value, objects)
        if encoded_member is None and value is not None:
            payload["lost"] = name
        else:
            members[name] = encoded_member
    if members:
        payload["members"] = members
    try:
        attrs = [(k, v) for k, v in vars(exc).items() if isinstance(k, str) and not k.startswith("__")]
    except TypeError:
        attrs = []
    encoded = {k: _plain_or_none(v, objects) for k, v in attrs[: wire.MAX_ATTRS]}
    payload["attrs"] = {k: v for k, v in encoded.items() if v is not None}
    for key, linked in (("cause", exc.__cause__), ("context", exc.__context__)):
        if key == "context" and linked is not None and linked is exc.__cause__:
            payload["context_is_cause"] = True  # `raise ... from exc` inside `except`: one object
        elif isinstance(linked, BaseException):
            if depth >= wire.MAX_CHAIN or linked is exc:
                payload["lost"] = f"__{key}__"  # a chain longer than crosses (or a cycle)
            else:
                payload[key] = _exception_payload(linked, objects, depth + 1)
    payload["suppress_context"] = bool(exc.__suppress_context__)
    return payload


#: Attributes of builtin exceptions kept outside ``args`` and ``__dict__`` (OSError.filename,
#: ImportError.name, AttributeError.obj, ...); those derived from ``args`` are rebuilt from it.
_DERIVED = frozenset({"args", "exceptions", "message"})


def _members(cls: type) -> list[str]:
    names = []
    for klass in getattr(cls, "__mro__", ()):
        if klass.__module__ != "builtins" or not issubclass(klass, BaseException):
            continue
        for name, value in vars(klass).items():
            if (
                isinstance(value, (types.MemberDescriptorType, types.GetSetDescriptorType))
                and not name.startswith("__")
                and name not in _DERIVED
                and name not in names
            ):
                names.append(name)
    return names


def _warning_payload(w: warnings.WarningMessage, objects: Objects) -> dict[str, Any]:
    message = w.message
    payload = _class_payload(type(message) if isinstance(message, Warning) else w.category)
    payload["message"] = _text(message)
    if isinstance(message, Warning):
        args = _plain_or_none(list(message.args), objects)
        if args is not None:
            payload["args"] = args
    payload["filename"] = _text(w.filename)[:500]
    payload["lineno"] = w.lineno if type(w.lineno) is int else 0
    return payload


_MISSING = object()


def _lookup(cls: type, name: str) -> Any:
    """`name` as Python finds a special method: in the class's MRO, never on its metaclass."""
    for klass in getattr(cls, "__mro__", (cls,)):
        found = vars(klass).get(name, _MISSING)
        if found is not _MISSING:
            return found
    return _MISSING


_HEAP_TYPE = 1 << 9


def _special(name: Any) -> bool:
    return type(name) is str and len(name) > 4 and name.startswith("__") and name.endswith("__")


def _abc_table() -> dict[str, type]:
    import collections.abc
    import contextlib
    import io
    import numbers

    mods = {"collections.abc": collections.abc, "numbers": numbers, "os": os, "io": io, "contextlib": contextlib}
    return {name: getattr(mods[name.rpartition(".")[0]], name.rpartition(".")[2]) for name in wire.ABCS}


def _protocols(cls: type, base: type = object) -> list[str]:
    """The type `cls` as `wire.MAX_DESCRIPTION` says: every special name it defines other than
    `base`'s (what each is), the standard library's ABCs it is a subclass of, weak references,
    and whether it overrides ``__class__``. The handle on the trusted side is made from this."""
    mro = getattr(cls, "__mro__", (cls,))
    names: dict[str, None] = {}
    for klass in mro:
        if klass is object:
            continue
        for name in list(vars(klass)):
            if _special(name):
                names.setdefault(name)
    found = []
    for name in names:
        value = _lookup(cls, name)
        if value is _MISSING or value is _lookup(base, name):
            continue
        if value is None:
            found.append(f"n:{name}")
        elif isinstance(value, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) or not (
            callable(value) or hasattr(type(value), "__get__")
        ):
            found.append(f"p:{name}")
        else:
            found.append(f"m:{name}")
    for name, abc in _abc_table().items():
        try:
            if issubclass(cls, abc):
                found.append(f"abc:{name}")
        except Exception:  # noqa: BLE001 - a metaclass whose checks raise: not a subclass
            continue
    if getattr(cls, "__weakrefoffset__", 0):
        found.append("weakref")
    if any(_own_class_answer(k) for k in mro if k is not object):
        found.append("class")
    return found


def _own_class_answer(k: type) -> bool:
    """Whether class `k` answers `__class__` or attribute lookups with code of its own: a Python
    class that defines either (a function, a property, anything), never a C type's own slot (a
    `wrapper_descriptor`: `functools.partial` is a heap type that has one, and answers as Python's
    generic lookup does)."""
    if not getattr(k, "__flags__", 0) & _HEAP_TYPE:
        return False
    own = vars(k)
    return "__class__" in own or (
        "__getattribute__" in own and not isinstance(own["__getattribute__"], types.WrapperDescriptorType)
    )


class Objects:
    """The candidate's objects the trusted side holds references to."""

    def __init__(self, modules: dict[str, Any]) -> None:
        self.modules = modules
        self.table: dict[int, Any] = {}
        self.methods: dict[type, list[str]] = {}
        self.protocols: dict[type, list[str]] = {}
        self.idents: dict[int, int] = {}
        #: The objects `refer` is encoding the value of (valued.py), to refuse a cycle through one.
        self.encoding: set[int] = set()

    def protocols_of(self, cls: type) -> list[str]:
        if cls not in self.protocols:
            try:
                self.protocols[cls] = _protocols(cls)
            except Exception:  # noqa: BLE001 - a metaclass whose attribute lookups raise
                self.protocols[cls] = []
        return self.protocols[cls]

    def methods_of(self, cls: type) -> list[str]:
        if cls not in self.methods:
            names = []
            for name in dir(cls):
                if name.startswith("__"):
                    continue
                try:
                    if callable(getattr(cls, name)):
                        names.append(name)
                except Exception:  # noqa: BLE001 - a descriptor that raises
                    continue
            self.methods[cls] = names[:MAX_METHODS]
        return self.methods[cls]

    def refer(self, obj: Any) -> list[Any]:
        base = _value_base(obj)
        if _has_buffer(obj) and base is not bytes:
            raise wire.BadWireValue(
                f"an object of type {_text(type(obj).__name__)[:100]} with a buffer (bytes-like): a handle could not "
                "answer memoryview(), bytes' operators or hashlib as it does; return bytes, or a bytearray the "
                "candidate no longer holds"
            )
        # One reference per object (the table keeps it alive, so its id stays its own): the
        # trusted side then holds one handle per object, and `iter(it) is it` holds there too.
        ident = self.idents.get(id(obj))
        if ident is None:
            ident = len(self.table) + 1
            self.table[ident] = obj
            self.idents[id(obj)] = ident
        if isinstance(obj, BaseException):  # an exception as a value: rebuilt there as one
            return ["H", [ident, _text(type(obj).__name__)[:100], "exception_value", [], _exception_payload(obj, self)]]
        if isinstance(obj, type):
            kind = "exception" if issubclass(obj, BaseException) else "class"
            payload = _class_payload(obj)
            if kind == "class":  # issubclass(C, Mapping) on the trusted side; `for c in Color`
                payload["abcs"] = _class_protocols(obj, self)
            return ["H", [ident, _text(obj.__name__)[:100], kind, [], payload]]
        cls = type(obj)
        if base is not None:  # also a builtin value: it crosses as both (valued.py)
            if id(obj) in self.encoding:  # a tuple that holds itself (through a list): as for a plain one
                raise wire.BadWireValue("a value nested deeper than 200 levels (or a cycle)")
            self.encoding.add(id(obj))
            try:
                value = {"base": base.__name__, "value": wire.encode(_base_value(obj, base), refer=self.refer)}
            finally:
                self.encoding.discard(id(obj))
            value["protocols"] = _protocols(cls, base)
            return ["H", [ident, _text(cls.__name__)[:100], "valued", self.methods_of(cls), value]]
        return ["H", [ident, _text(cls.__name__)[:100], "object", self.methods_of(cls), self.protocols_of(cls)]]

    def resolve(self, tag: str, body: Any, depth: int = 0) -> Any:
        if tag == "H":
            return self.table[int(body)]
        module, name = body
        return getattr(self.modules[module], name)

    def encode(self, value: Any, depth: int = 0) -> Any:
        return wire.encode(value, depth, self.refer)

    def decode(self, value: Any, depth: int = 0) -> Any:
        return wire.decode(value, depth, self.resolve)


#: Module attributes the tests call through a plain forwarding function; other callables (an
#: lru_cache wrapper, a partial, an instance with __call__) are objects, reached by handle.
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


#: `sys.getrefcount` of an answer that only the answering loop's own name holds (the name and
#: getrefcount's argument): nothing in the candidate's process can change or alias it later.
_UNHELD = 2


#: The immutable builtins whose subclasses' instances cross as values and objects at once
#: (valued.py on the trusted side), and how the value is read: through the builtin's own slots,
#: never a method of the subclass, exactly of the builtin's type.
_READ_VALUE: dict[type, Callable[[Any], Any]] = {
    str: str.__str__, int: int.__int__, float: float.__float__, frozenset: frozenset.copy,
    complex: lambda o: complex(complex.real.__get__(o), complex.imag.__get__(o)),  # type: ignore[attr-defined]
    bytes: lambda o: bytes(memoryview(o)), tuple: lambda o: tuple.__getitem__(o, slice(None)),
}  # fmt: skip


def _value_base(obj: Any) -> type | None:
    """The builtin of `_READ_VALUE` that `obj`'s type subclasses (not the builtin itself, which is
    plain data), or None. numpy's and pandas' scalars stay theirs (scidata)."""
    cls = type(obj)
    if cls in _READ_VALUE or str(getattr(cls, "__module__", "")).partition(".")[0] in ("numpy", "pandas"):
        return None
    return next((b for b in getattr(cls, "__mro__", ()) if b in _READ_VALUE), None)


def _base_value(obj: Any, base: type) -> Any:
    return _READ_VALUE[base](obj)


def _has_buffer(obj: Any) -> bool:
    """Whether `obj`'s type has the buffer protocol (bytearray, memoryview, array.array, mmap,
    a numpy array refused as data, their subclasses). A handle cannot have one in Python 3.11
    (no ``__buffer__``): memoryview(), ``b"" + x`` and hashlib would raise TypeError for the
    handle and not for the object, so such an object never becomes a handle."""
    try:
        memoryview(obj).release()
    except TypeError:
        return False
    except Exception:  # noqa: BLE001 - the type has a buffer; this object refused to export it
        return True
    return True


def _class_protocols(cls: type, objects: Objects) -> list[str]:
    """The standard ABCs class `cls` is a subclass of (``abc:NAME``), and the protocols of
    `wire.CLASS_PROTOCOLS` its metaclass has beyond `type`'s (``meta:m:NAME``, as `_protocols` says)."""
    found = [p for p in objects.protocols_of(cls) if p.startswith("abc:")]
    try:
        meta = _protocols(type(cls), type)
    except Exception:  # noqa: BLE001 - a metaclass whose attribute lookups raise
        meta = []
    return found + [f"meta:{p}" for p in meta if p.partition(":")[2] in wire.CLASS_PROTOCOLS]


def _value_kind(value: Any, objects: Objects) -> list[Any]:
    """How the tests get a module attribute that is neither a module, a class nor a function."""
    try:
        return ["value", wire.encode(value)]
    except wire.BadWireValue:
        pass
    base = _value_base(value)
    if base is not None:  # a constant that is also a builtin value (valued.py), holding plain data
        try:
            held = wire.encode(_base_value(value, base))
            cls = type(value)
            described = [objects.methods_of(cls), _protocols(cls, base), _text(cls.__name__)[:100]]
            return ["valued", base.__name__, held, *described]
        except wire.BadWireValue:
            pass  # a tuple holding objects: a handle, as any other object
    if _has_buffer(value):  # neither a value nor a handle answers as it would
        return ["not_plain", f"a {_text(type(value).__name__)[:100]} with a buffer (bytes-like)"]
    return ["object", objects.methods_of(type(value)), objects.protocols_of(type(value))]


def _names(mod: Any, objects: Objects) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name in dir(mod):
        if name.startswith("__"):
            continue
        value = getattr(mod, name, None)
        if isinstance(value, types.ModuleType):
            names[name] = ["module"]
        elif isinstance(value, type) and issubclass(value, BaseException):
            names[name] = ["exception", _class_payload(value)]
        elif isinstance(value, type):
            names[name] = ["class", _class_protocols(value, objects)]
        elif isinstance(value, _FUNCTIONS):
            names[name] = ["callable"]
        else:
            names[name] = _value_kind(value, objects)
    return names


class _Stop:
    """An iterator's end, with the value its StopIteration carried (a generator's return)."""

    def __init__(self, value: Any) -> None:
        self.value = value


_RAISED = object()


_BINARY = {f"__{op}__": getattr(operator, f"{op}_" if op in ("and", "or") else op) for op in wire.BINARY}
_INPLACE = {f"__i{op}__": getattr(operator, f"i{op}") for op in wire.BINARY}
_UNARY: dict[str, Any] = {
    "__hash__": hash, "__copy__": copy.copy, "__deepcopy__": copy.deepcopy,
    "__dir__": lambda t: sorted(map(str, dir(t))), "__sizeof__": sys.getsizeof,
}  # fmt: skip


class _NotImplemented:
    """A special method's own answer NotImplemented: the trusted side's Python goes on from it."""


def _dunder(target: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A special method of `target`'s type. Binary operators as Python itself applies them
    (reflected operands included: both operands are here); any other as Python calls it, the
    type's own method with the arguments the trusted side's Python passed, its answer as is."""
    if name in _UNARY:
        return _UNARY[name](target)
    if name in ("__divmod__", "__rdivmod__"):
        return divmod(target, args[0]) if name == "__divmod__" else divmod(args[0], target)
    if name == "__pow__" and len(args) == 2:
        return pow(target, args[0], args[1])
    if name in _BINARY:
        return _BINARY[name](target, args[0])
    if name.startswith("__r") and "__" + name[3:] in _BINARY:
        return _BINARY["__" + name[3:]](args[0], target)
    if name in _INPLACE:
        return _INPLACE[name](target, args[0])
    if name == "__delattr__":
        return delattr(target, str(args[0]))
    if name == "__getstate__":
        return target.__getstate__()
    method = _lookup(type(target), name)
    if method is _MISSING or method is None:
        raise TypeError(f"{type(target).__name__!r} object has no {name[:40]}")
    bound = method.__get__(target, type(target)) if hasattr(type(method), "__get__") else method
    answer = bound(*args, **kwargs)
    return _NotImplemented() if answer is NotImplemented else answer


def _exit(target: Any, name: str, args: list[Any]) -> Any:
    """``__exit__`` (or ``__aexit__``) with the test's exception rebuilt as the builtin type the
    trusted side named."""
    method = getattr(type(target), name)
    if not args or args[0] is None:
        return method(target, None, None, None)
    cls = getattr(builtins, str(args[0]), None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = Exception
    exc = cls(*(args[1:2] if len(args) > 1 else []))
    return method(target, cls, exc, None)


def _perform(op: str, target: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if op == "call":
        return target(*args, **kwargs)
    if op == "callattr":
        return getattr(target, name)(*args, **kwargs)
    if op == "getattr":
        return getattr(target, name)
    if op == "setattr":
        return setattr(target, name, args[0])
    if op == "getitem":
        return target[args[0]]
    if op == "setitem":
        target[args[0]] = args[1]
        return None
    if op == "delitem":
        del target[args[0]]
        return None
    if op == "contains":
        return args[0] in target
    if op == "iter":
        return iter(target)
    if op == "next":
        try:
            return next(target)
        except StopIteration as stop:
            return _Stop(stop.value)
    if op == "isinstance":
        return isinstance(args[0], target)
    if op == "issubclass":
        return isinstance(args[0], type) and issubclass(args[0], target)
    if op == "dunder":
        return _dunder(target, name, args, kwargs)
    if op == "exit":
        return _exit(target, name or "__exit__", args)
    if op == "same":
        return args[0] is target
    unary: dict[str, Any] = {"len": len, "bool": bool, "str": str, "repr": repr}
    return unary[op](target)


def serve(rpc_fd: int, out_fd: int, modules: list[str], directory: str, ready_fd: int) -> None:
    """Import the candidate's modules and answer calls on `rpc_fd`; `ready_fd`: see newborn.say_ready."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    keep_only_descriptors(0, 1, 2, rpc_fd, ready_fd)
    sys.stdout = open(1, "w", buffering=1, errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, errors="replace", closefd=False)  # noqa: SIM115
    sock = socket.socket(fileno=rpc_fd)
    os.chdir(directory)
    sys.path.insert(0, directory)
    loaded: dict[str, Any] = {}
    objects = Objects(loaded)
    say_ready(ready_fd)
    try:
        for name in modules:
            loaded[name] = importlib.import_module(name)
        hello: dict[str, Any] = {"hello": True, "modules": {n: _names(m, objects) for n, m in loaded.items()}}
    except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
        hello = {"hello": False, **_exception_payload(exc), "traceback": traceback.format_exc()[-MAX_TEXT:]}
        wire.send(sock, hello)
        return
    wire.send(sock, hello)
    while True:
        try:
            request = wire.recv(sock, limit=REQUEST_LIMIT)
        except EOFError:
            return
        try:
            op = str(request["op"])
            if op not in wire.OPS:
                raise ValueError(f"unknown op {op[:40]!r}")
            tag, body = request["target"]
            target = objects.resolve(tag, body)
            with scidata.scope() as received:  # the request's arrays, for the answer's `NR`/`NV`
                args = objects.decode(request["args"], wire.ARGS_DEPTH)
                kwargs = objects.decode(request["kwargs"], wire.ARGS_DEPTH)
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            wire.send(sock, {"protocol_error": _text(exc)})
            continue
        if op == "each":
            _answer_each(sock, objects, target, str(request.get("name", "")), request.get("calls"))
            continue
        wire.send(sock, _reply(objects, op, target, str(request.get("name", "")), args, kwargs, request, received))


def _reply(
    objects: Objects,
    op: str,
    target: Any,
    name: str,
    args: list[Any],
    kwargs: dict[str, Any],
    request: dict[str, Any],
    received: list[Any],
) -> dict[str, Any]:
    """Perform one request and make its reply."""
    reply: dict[str, Any]
    # Warnings the call emits go back with its answer, to be issued again in the test
    # (under the tests' own filters: pytest.warns, recwarn, -W error).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _perform(op, target, name, args, kwargs)
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            reply = _exception_payload(exc, objects)
            result = _RAISED
    emitted = [_warning_payload(w, objects) for w in caught[: wire.MAX_WARNINGS]]
    if result is not _RAISED:
        try:
            with scidata.scope(received):
                if isinstance(result, _Stop):
                    reply = {"stop": True, "value": objects.encode(result.value)}
                elif isinstance(result, _NotImplemented):
                    reply = {"not_implemented": True}
                elif type(result) is bytearray and sys.getrefcount(result) <= _UNHELD:
                    reply = {"value": wire.encode_bytearray(result)}
                else:
                    reply = {"value": objects.encode(result)}
        except wire.BadWireValue as exc:
            reply = {"not_plain": _text(exc)[:200]}
    if emitted:
        reply["warnings"] = emitted
    if request.get("sync_args"):
        try:
            with scidata.scope():
                reply["args_after"] = objects.encode(args, wire.ARGS_DEPTH)
                reply["kwargs_after"] = objects.encode(kwargs, wire.ARGS_DEPTH)
        except wire.BadWireValue:
            reply = {"not_plain_args": True}
    return reply


def _answer_each(sock: socket.socket, objects: Objects, target: Any, name: str, calls: Any) -> None:
    """The "each" request: a "call" reply per argument list, until one ends it (`wire.EACH_ENDS`)."""
    if type(calls) is not list or not calls:
        wire.send(sock, {"protocol_error": "each: calls is not a list of argument lists"})
        return
    sent = 0
    for encoded in calls:
        try:
            with scidata.scope() as received:
                args = objects.decode(encoded, wire.ARGS_DEPTH)
            if type(args) is not list:
                raise ValueError("each: an argument list is not a list")
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            wire.send(sock, {"protocol_error": _text(exc)})
            return
        reply = _reply(objects, "call", target, name, args, {}, {}, received)
        sent += wire.send(sock, reply)
        if wire.each_ends(reply, sent):
            return
