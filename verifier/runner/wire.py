"""Plain data across the process boundary, and length-prefixed frames.

Only exact builtin types cross: None, bool, int, float, complex, str, bytes, list,
tuple, dict, set, frozenset. Subclasses are refused (a list subclass with a forged
``__eq__`` is exactly what a cheating candidate returns), so nothing but values
built by the trusted side's own decoder ever reaches a test.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
from typing import Any

MAX_FRAME = 64 * 1024 * 1024
MAX_DEPTH = 200
_LEN = struct.Struct(">I")


class NotPlainData(TypeError):
    """A value is not made of exact builtin types."""


def encode(value: Any, depth: int = 0) -> Any:
    """A JSON-able form of `value`; raises NotPlainData naming the first offending type."""
    if depth > MAX_DEPTH:
        raise NotPlainData("a value nested deeper than 200 levels (or a cycle)")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value if abs(value) < 2**53 else ["I", str(value)]
    if t is float:
        return ["f", value.hex()]
    if t is list:
        return ["L", [encode(v, depth + 1) for v in value]]
    if t is tuple:
        return ["T", [encode(v, depth + 1) for v in value]]
    if t is dict:
        return ["D", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    if t is set:
        return ["S", [encode(v, depth + 1) for v in value]]
    if t is frozenset:
        return ["F", [encode(v, depth + 1) for v in value]]
    if t is bytes:
        return ["B", base64.b64encode(value).decode()]
    if t is complex:
        return ["C", [value.real.hex(), value.imag.hex()]]
    raise NotPlainData(f"an object of type {t.__name__}, not plain data")


def decode(value: Any, depth: int = 0) -> Any:
    """Build builtin values from `encode`'s form. Untrusted input: only builtins come out."""
    if depth > MAX_DEPTH:
        raise NotPlainData("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is not list or len(value) != 2 or type(value[0]) is not str:
        raise NotPlainData(f"malformed wire value {str(value)[:80]!r}")
    tag, body = value
    if tag == "I":
        return int(body)
    if tag == "f":
        return float.fromhex(body)
    if tag == "L":
        return [decode(v, depth + 1) for v in body]
    if tag == "T":
        return tuple(decode(v, depth + 1) for v in body)
    if tag == "D":
        return {decode(k, depth + 1): decode(v, depth + 1) for k, v in body}
    if tag == "S":
        return {decode(v, depth + 1) for v in body}
    if tag == "F":
        return frozenset(decode(v, depth + 1) for v in body)
    if tag == "B":
        return base64.b64decode(body)
    if tag == "C":
        return complex(float.fromhex(body[0]), float.fromhex(body[1]))
    raise NotPlainData(f"unknown wire tag {tag!r}")


def send(sock: socket.socket, message: Any) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    if len(data) > MAX_FRAME:
        raise NotPlainData(f"a message of {len(data)} bytes, over the {MAX_FRAME}-byte limit")
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed the channel")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket) -> Any:
    (size,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if size > MAX_FRAME:
        raise NotPlainData(f"a message of {size} bytes, over the {MAX_FRAME}-byte limit")
    return json.loads(_recv_exact(sock, size))
