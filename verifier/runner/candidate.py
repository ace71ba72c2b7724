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

import importlib
import os
import socket
import sys
import traceback
from typing import Any

from . import wire
from .zygote import keep_only_descriptors, say_ready

MAX_TEXT = 4000
#: Requests come from the trusted side; this only bounds what this process reads.
REQUEST_LIMIT = 256 * 1024**2
MAX_METHODS = 200


def _text(obj: object) -> str:
    try:
        return str(obj)[:MAX_TEXT]
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        return "<unprintable>"


def _exception_payload(exc: BaseException) -> dict[str, Any]:
    mro = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
    return {"raised": _text(type(exc).__name__)[:200], "mro": mro, "message": _text(exc)}


class Objects:
    """The candidate's objects the trusted side holds references to."""

    def __init__(self, modules: dict[str, Any]) -> None:
        self.modules = modules
        self.table: dict[int, Any] = {}
        self.methods: dict[type, list[str]] = {}

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
        ident = len(self.table) + 1
        self.table[ident] = obj
        if isinstance(obj, type):
            return ["H", [ident, _text(obj.__name__)[:100], "class", []]]
        return ["H", [ident, _text(type(obj).__name__)[:100], "object", self.methods_of(type(obj))]]

    def resolve(self, tag: str, body: Any) -> Any:
        if tag == "H":
            return self.table[int(body)]
        module, name = body
        return getattr(self.modules[module], name)

    def encode(self, value: Any) -> Any:
        return wire.encode(value, refer=self.refer)

    def decode(self, value: Any) -> Any:
        return wire.decode(value, resolve=self.resolve)


def _names(mod: Any, objects: Objects) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name in dir(mod):
        if name.startswith("__"):
            continue
        value = getattr(mod, name, None)
        if isinstance(value, type):
            names[name] = ["class"]
        elif callable(value):
            names[name] = ["callable"]
        else:
            try:
                names[name] = ["value", wire.encode(value)]
            except wire.NotPlainData:
                names[name] = ["object", objects.methods_of(type(value))]
    return names


_STOP = object()


OPS = (
    "call", "callattr", "getattr", "setattr", "getitem", "setitem", "delitem", "contains",
    "iter", "next", "isinstance", "len", "bool", "str", "repr",
)  # fmt: skip


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
        except StopIteration:
            return _STOP
    if op == "isinstance":
        return isinstance(args[0], target)
    unary: dict[str, Any] = {"len": len, "bool": bool, "str": str, "repr": repr}
    return unary[op](target)


def serve(rpc_fd: int, out_fd: int, modules: list[str], directory: str, ready_fd: int) -> None:
    """Import the candidate's modules and answer calls on `rpc_fd`; `ready_fd`: see zygote.say_ready."""
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
        reply: dict[str, Any]
        try:
            op = str(request["op"])
            if op not in OPS:
                raise ValueError(f"unknown op {op[:40]!r}")
            tag, body = request["target"]
            target = objects.resolve(tag, body)
            args = objects.decode(request["args"])
            kwargs = objects.decode(request["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            wire.send(sock, {"protocol_error": _text(exc)})
            continue
        try:
            result = _perform(op, target, str(request.get("name", "")), args, kwargs)
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            reply = _exception_payload(exc)
        else:
            try:
                reply = {"stop": True} if result is _STOP else {"value": objects.encode(result)}
            except wire.NotPlainData as exc:
                reply = {"not_plain": _text(exc)[:200]}
        if request.get("sync_args"):
            try:
                reply["args_after"] = objects.encode(args)
                reply["kwargs_after"] = objects.encode(kwargs)
            except wire.NotPlainData:
                reply = {"not_plain_args": True}
        wire.send(sock, reply)
