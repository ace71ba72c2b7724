"""The candidate process: imports the candidate module and answers calls with plain data.

Everything here runs beside untrusted code and may be subverted by it; that is fine,
because all that leaves this process is bytes that the trusted side checks and decodes into
builtin values. Nothing here is trusted, and nothing here limits anything: the trusted side
enforces sizes and deadlines on what it receives.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import traceback
from typing import Any

from . import wire

MAX_TEXT = 4000
#: Requests come from the trusted side; this only bounds what this process reads.
REQUEST_LIMIT = 256 * 1024**2


def _text(obj: object) -> str:
    try:
        return str(obj)[:MAX_TEXT]
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        return "<unprintable>"


def _exception_payload(exc: BaseException) -> dict[str, Any]:
    mro = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
    return {"raised": _text(type(exc).__name__)[:200], "mro": mro, "message": _text(exc)}


def _names(mod: Any) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name in dir(mod):
        if name.startswith("__"):
            continue
        value = getattr(mod, name, None)
        if callable(value):
            names[name] = ["callable"]
        else:
            try:
                names[name] = ["value", wire.encode(value)]
            except wire.NotPlainData:
                names[name] = ["opaque"]
    return names


def serve(rpc_fd: int, out_fd: int, module: str, directory: str) -> None:
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    sys.stdout = open(1, "w", buffering=1, errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, errors="replace", closefd=False)  # noqa: SIM115
    sock = socket.socket(fileno=rpc_fd)
    os.chdir(directory)
    sys.path.insert(0, directory)
    try:
        mod = importlib.import_module(module)
        hello: dict[str, Any] = {"hello": True, "names": _names(mod)}
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
            func = getattr(mod, request["name"])
            args = wire.decode(request["args"])
            kwargs = wire.decode(request["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            wire.send(sock, {"protocol_error": _text(exc)})
            continue
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - every way the candidate ends is an answer
            reply = _exception_payload(exc)
        else:
            try:
                reply = {"value": wire.encode(result)}
            except wire.NotPlainData:
                reply = {"not_plain": type(result).__name__[:200]}
        if request.get("sync_args"):
            try:
                reply["args_after"] = wire.encode(args)
                reply["kwargs_after"] = wire.encode(kwargs)
            except wire.NotPlainData:
                reply = {"not_plain_args": True}
        wire.send(sock, reply)
