"""Plain data across the process boundary, and length-prefixed frames with limits and deadlines.

Only exact builtin types cross as values: None, bool, int, float, complex, str, bytes, list,
tuple, dict, set, frozenset, slice, range, and the standard library's exact number types
`decimal.Decimal` and `fractions.Fraction` (rebuilt from their exact text and parts); and, where
a suite's environment has them, numpy arrays and scalars and pandas Index/Series/DataFrame
(the scidata package: dtype, shape and exact bytes, rebuilt with the receiver's own library).
Subclasses are not values (a list subclass with a forged ``__eq__`` is exactly what a
cheating candidate returns): any other object stays in the candidate's process and crosses as
a reference (["H", ...]: an object of the candidate's table, ["N", ...]: a module attribute
by name), which the trusted side turns into a handle (handles.py). Nothing but values built by
the trusted side's own decoder, and its own handles, ever reaches a test.

A receiver never trusts the sender's pace or size: `recv` takes a deadline for the whole
frame (a sender that stalls half way is a timeout, not a hang) and a byte limit checked
on the header, before any payload is read; `loads` bounds the number of values a payload
may expand into before decoding it.
"""

from __future__ import annotations

import base64
import json
import select
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

from . import scidata
from .protocol import read_exact

#: pytest leaves this module's frames out of a failure's text (it reads `__tracebackhide__` from
#: a frame's globals too): they are the verifier's, not the test's or the candidate's doing.
__tracebackhide__ = True

MAX_DEPTH = 200
#: Longest text of a Decimal that crosses (its digits and exponent).
MAX_DECIMAL = 100_000
_LEN = struct.Struct(">I")
#: A frame's byte limit divided by this is the most values it may decode into, so that what
#: decoding builds in memory stays proportional to the limit (about 60 bytes per value).
BYTES_PER_VALUE = 8


class BadWireValue(TypeError):
    """A value is not made of exact builtin types (or a frame is malformed). Internal: the trusted
    side turns it into the abort `faults.NotPlainData`, the candidate side into its own reply."""


class FrameTooLarge(ValueError):
    """A frame over the receiver's byte or value limit."""


class FrameTimeout(TimeoutError):
    """The deadline passed before a whole frame arrived."""


#: The call protocol between the trusted side (proxy.py, handles.py) and the candidate process
#: (candidate.py): the requests a candidate process answers. "dunder" names a special method of
#: the target's type in the request's `name`.
OPS = (
    "call", "callattr", "getattr", "setattr", "getitem", "setitem", "delitem", "contains",
    "iter", "next", "isinstance", "issubclass", "len", "bool", "str", "repr", "dunder", "exit", "same",
    "each",
)  # fmt: skip
#: "each" (`calls.each`): one request calls the target once per argument list of its `calls`, in
#: order, and the candidate process sends one reply per call, each exactly the reply a "call"
#: would get (arguments not carried back). It stops after a reply that holds one of these keys,
#: that referred to any of its objects (a handle is made of it), or that reached the byte count
#: below, so the trusted side, which applies the same rule, always knows how many are coming.
EACH_ENDS = ("raised", "not_plain", "protocol_error")
#: ... or that brought the payloads of its replies to this many bytes: the answers of a chunk
#: the trusted side holds at once stay small, whatever one answer may be (`reply_bytes`).
EACH_REPLY_BYTES = 256 * 1024


def each_ends(reply: dict[str, Any], chunk_bytes: int) -> bool:
    """The one rule both sides end an "each" chunk by, read from the reply as sent: after a reply
    holding an `EACH_ENDS` key or a reference (in its value or a warning's arguments), or once
    the chunk's reply payloads reached `EACH_REPLY_BYTES` (`chunk_bytes`, this one's included)."""
    if chunk_bytes >= EACH_REPLY_BYTES or any(key in reply for key in EACH_ENDS):
        return True
    warned = reply.get("warnings")
    carried = [w.get("args") for w in warned if type(w) is dict] if type(warned) is list else []
    return holds_reference(reply.get("value")) or any(holds_reference(args) for args in carried)


def holds_reference(value: Any, depth: int = 0) -> bool:
    """Whether `encode`'s form of a value holds a reference (["H", ...] or ["N", ...])."""
    if type(value) is not list or len(value) != 2 or type(value[0]) is not str or depth > MAX_DEPTH:
        return depth > MAX_DEPTH
    tag, body = value
    if tag in ("H", "N"):
        return True
    if tag == "D" and type(body) is list:
        return any(holds_reference(item, depth + 1) for pair in body if type(pair) is list for item in pair)
    if tag in ("L", "T", "S", "F", "SL") and type(body) is list:
        return any(holds_reference(item, depth + 1) for item in body)
    return False


#: Binary operators: the candidate process applies ``a + b`` (and ``__radd__``, ``__iadd__``) as
#: Python does, reflected operands and NotImplemented included, with both operands its own.
BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift")
#: A candidate object's type, as a reference describes it (candidate.py makes it, handles.py
#: builds the handle's class from it): one entry per special (``__x__``) name the type defines
#: other than `object`'s, ``"m:NAME"`` (a method), ``"n:NAME"`` (set to None, as ``__hash__`` of
#: a type with ``__eq__``), ``"p:NAME"`` (a property or other attribute, read where it lives);
#: ``"abc:NAME"`` for each of `ABCS` the type is a subclass of; ``"weakref"`` when its objects
#: take weak references; ``"class"`` when it overrides ``__class__`` or ``__getattribute__``.
MAX_DESCRIPTION = 500
#: What a candidate class does through its metaclass that its stand-in forwards (an enum class:
#: ``for c in Color``, ``len(Color)``, ``Color["RED"]``, ``"RED" in Color``, ``reversed(Color)``).
CLASS_PROTOCOLS = frozenset({"__iter__", "__len__", "__contains__", "__getitem__", "__reversed__", "__bool__"})
#: The standard library's abstract classes a handle's class is registered with, when the
#: candidate object's type is a subclass of them (``isinstance(h, Mapping)``, ``numbers.Real``).
ABCS = (
    *(f"collections.abc.{n}" for n in (
        "Awaitable", "Coroutine", "AsyncIterable", "AsyncIterator", "AsyncGenerator", "Hashable", "Iterable",
        "Iterator", "Generator", "Reversible", "Sized", "Container", "Callable", "Collection", "Set", "MutableSet",
        "Mapping", "MutableMapping", "MappingView", "KeysView", "ItemsView", "ValuesView", "Sequence",
        "MutableSequence", "ByteString",
    )),
    "numbers.Number", "numbers.Complex", "numbers.Real", "numbers.Rational", "numbers.Integral", "os.PathLike",
    "io.IOBase", "io.RawIOBase", "io.BufferedIOBase", "io.TextIOBase",
    "contextlib.AbstractContextManager", "contextlib.AbstractAsyncContextManager",
)  # fmt: skip
#: Exceptions that steer the caller's control flow: they never cross as themselves.
CONTROL_FLOW = frozenset({"StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyboardInterrupt", "SystemExit"})
#: How much of a candidate exception crosses: chained causes, classes of its MRO, attributes.
MAX_CHAIN = 8
MAX_CLASSES = 16
MAX_ATTRS = 50
#: Bytes of an exception's (or warning's) arguments, or of one attribute, that cross as data.
MAX_EXCEPTION_DATA = 16 * 1024
#: Warnings one call may carry back to the tests.
MAX_WARNINGS = 100


#: Turns an object that is not plain data into a reference (the candidate's table of objects),
#: or raises BadWireValue; None: such an object is refused.
Refer = Callable[[Any], Any]
#: Builds the object a reference stands for (a handle on the trusted side, the object itself on
#: the candidate's) from its tag, its body and the depth it was met at, or raises BadWireValue.
Resolve = Callable[[str, Any, int], Any]


#: The depth a call's argument list (or keyword dict) is encoded at: the list is the call's
#: wrapper, not a level of its values, so a value nests as deep as an argument as an answer.
ARGS_DEPTH = -1
#: A Fraction's numerator and denominator cross up to this many bits (its receiver reduces it:
#: a gcd of two 65,536-bit ints is milliseconds, of two 6-million-bit ones a minute).
MAX_FRACTION_BITS = 1 << 16


def _float_text(value: float) -> str:
    """A float exactly: its hex, or a NaN's bits (every NaN's hex is 'nan': sign and payload lost)."""
    return value.hex() if value == value else "nan:" + struct.pack(">d", value).hex()


def _float_of(text: Any) -> float:
    if type(text) is not str:
        raise BadWireValue("malformed wire value")
    if text.startswith("nan:") and len(text) == 20:
        value: float = struct.unpack(">d", bytes.fromhex(text[4:]))[0]
        if value == value:
            raise BadWireValue("malformed wire value")
        return value
    return float.fromhex(text)


def encode(value: Any, depth: int = 0, refer: Refer | None = None) -> Any:
    """A JSON-able form of `value`; raises BadWireValue naming the first offending type.

    With `refer`, an object that is not plain data becomes the reference `refer` returns
    (a tagged ["H", ...] or ["N", ...] value) instead.
    """
    if depth > MAX_DEPTH:
        raise BadWireValue("a value nested deeper than 200 levels (or a cycle)")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:  # in hex: Python refuses decimal strings of ints beyond 4,300 digits, either way
        return value if abs(value) < 2**53 else ["I", hex(value)]
    if t is float:
        return ["f", _float_text(value)]
    if t is list:
        return ["L", [encode(v, depth + 1, refer) for v in value]]
    if t is tuple:
        return ["T", [encode(v, depth + 1, refer) for v in value]]
    if t is dict:
        return ["D", [[encode(k, depth + 1, refer), encode(v, depth + 1, refer)] for k, v in value.items()]]
    if t is set:
        return ["S", [encode(v, depth + 1, refer) for v in value]]
    if t is frozenset:
        return ["F", [encode(v, depth + 1, refer) for v in value]]
    if t is bytes:
        return ["B", base64.b64encode(value).decode()]
    if t is complex:
        return ["C", [_float_text(value.real), _float_text(value.imag)]]
    if t is slice:
        return ["SL", [encode(v, depth + 1, refer) for v in (value.start, value.stop, value.step)]]
    if t is range:
        return ["R", [encode(v, depth + 1) for v in (value.start, value.stop, value.step)]]
    if t is getattr(sys.modules.get("decimal"), "Decimal", None):
        text = str(value)
        if len(text) > MAX_DECIMAL:  # what `decode` refuses is refused here, on the side that sends it
            raise BadWireValue(f"a Decimal of {len(text)} characters (at most {MAX_DECIMAL} cross)")
        return ["DE", text]
    if t is getattr(sys.modules.get("fractions"), "Fraction", None):
        if max(abs(value.numerator).bit_length(), value.denominator.bit_length()) > MAX_FRACTION_BITS:
            raise BadWireValue(f"a Fraction of parts over {MAX_FRACTION_BITS} bits")
        return ["FR", [encode(value.numerator), encode(value.denominator)]]
    if "numpy" in sys.modules:
        try:
            data = scidata.encode(value, depth, PLAIN)
        except scidata.Aliased as exc:  # neither a copy nor a handle would answer as the real one
            raise BadWireValue(str(exc)) from None
        except (scidata.NotData, BadWireValue, RecursionError):
            data = None  # a numpy/pandas object with no exact form: a reference, like any object
        if data is not None:
            return data
    if refer is not None:
        return refer(value)
    raise BadWireValue(f"an object of type {t.__name__}, not plain data")


def encode_bytearray(value: bytearray) -> list[Any]:
    """An exact bytearray as a value: only a candidate's answer that nothing in its process still
    holds (candidate.py checks that), so a copy on the trusted side is the object itself. Any
    other bytearray (an argument, one the candidate keeps) is not plain data: a copy would not
    see a change made in place, and a handle has no buffer."""
    return ["BA", base64.b64encode(value).decode()]


def decode(value: Any, depth: int = 0, resolve: Resolve | None = None) -> Any:
    """Build builtin values from `encode`'s form. Untrusted input: only builtins come out, and
    references only through `resolve` (handles the trusted side made itself)."""
    if depth > MAX_DEPTH:
        raise BadWireValue("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is not list or len(value) != 2 or type(value[0]) is not str:
        raise BadWireValue("malformed wire value")
    tag, body = value
    if tag == "I" and type(body) is str:
        return int(body, 16)
    if tag == "f":
        return _float_of(body)
    if tag == "L":
        return [decode(v, depth + 1, resolve) for v in body]
    if tag == "T":
        return tuple(decode(v, depth + 1, resolve) for v in body)
    if tag == "D":
        return {decode(k, depth + 1, resolve): decode(v, depth + 1, resolve) for k, v in body}
    if tag == "S":
        return {decode(v, depth + 1, resolve) for v in body}
    if tag == "F":
        return frozenset(decode(v, depth + 1, resolve) for v in body)
    if tag in ("B", "BA") and type(body) is str:
        data = base64.b64decode(body, validate=True)
        return data if tag == "B" else bytearray(data)
    if tag == "C" and type(body) is list and len(body) == 2:
        return complex(_float_of(body[0]), _float_of(body[1]))
    if tag == "SL" and type(body) is list and len(body) == 3:
        return slice(*(decode(v, depth + 1, resolve) for v in body))
    if tag in ("R", "FR") and type(body) is list and len(body) == (3 if tag == "R" else 2):
        parts = [decode(v, depth + 1) for v in body]
        if any(type(v) is not int for v in parts) or parts[-1] == 0:  # a step or denominator of 0
            raise BadWireValue("malformed wire value")
        if tag == "R":
            return range(*parts)
        if max(abs(parts[0]).bit_length(), parts[1].bit_length()) > MAX_FRACTION_BITS:
            raise BadWireValue("malformed wire value")  # its reduction would cost the receiver
        from fractions import Fraction

        return Fraction(parts[0], parts[1])
    if tag == "DE" and type(body) is str and len(body) <= MAX_DECIMAL:
        from decimal import Decimal, InvalidOperation

        try:
            return Decimal(body)
        except InvalidOperation:
            raise BadWireValue("malformed wire value") from None
    if tag in scidata.TAGS:
        try:
            return scidata.decode(tag, body, depth, PLAIN)
        except scidata.Aliased:
            raise
        except Exception as exc:  # noqa: BLE001 - untrusted input: whatever it makes the libraries raise
            raise BadWireValue(f"malformed wire value ({exc})"[:200]) from None
    if tag in ("H", "N") and resolve is not None:
        return resolve(tag, body, depth)
    raise BadWireValue("unknown wire tag")


def _plain(value: Any, depth: int) -> Any:
    """`encode` without references: what an object array's elements and pandas labels must be."""
    return encode(value, depth)


def _plain_value(value: Any, depth: int) -> Any:
    """`decode` without references: a reference inside an array or a label is refused."""
    return decode(value, depth)


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def loads(payload: bytes, *, max_values: int) -> Any:
    """JSON-decode an untrusted payload, refusing one that would expand into too many values."""
    values = payload.count(b"[") + payload.count(b",") + payload.count(b"{")
    if values > max_values:
        raise FrameTooLarge(f"a frame of {len(payload)} bytes holding about {values} values (limit {max_values})")
    return json.loads(payload)


def send(sock: socket.socket, message: Any, limit: int | None = None) -> int:
    """Send `message` as one frame; its payload's size."""
    data = dumps(message)
    if limit is not None and len(data) > limit:
        raise FrameTooLarge(f"a message of {len(data)} bytes, over the {limit}-byte limit")
    sock.sendall(_LEN.pack(len(data)) + data)
    return len(data)


def recv_frame(sock: socket.socket, *, limit: int, deadline: float | None = None) -> bytes:
    """One frame's payload. Raises EOFError, FrameTimeout, or FrameTooLarge (before reading it)."""

    def recv(n: int) -> bytes:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([sock], [], [], remaining)[0]:
                raise FrameTimeout("the deadline passed before the whole frame arrived")
        return sock.recv(n)

    (size,) = _LEN.unpack(read_exact(recv, _LEN.size))
    if size > limit:
        raise FrameTooLarge(f"a message of {size} bytes, over the {limit}-byte limit")
    return read_exact(recv, size)


def recv(sock: socket.socket, *, limit: int, deadline: float | None = None) -> Any:
    return loads(recv_frame(sock, limit=limit, deadline=deadline), max_values=limit // BYTES_PER_VALUE)


#: A read of a frame's socket asks for at least this much (below malloc's mmap threshold) ...
READ_CHUNK = 1 << 16
#: ... and at most this much (a large frame arrives in reads of this size).
MAX_READ = 1 << 20


class FrameReader:
    """Assembles one frame at a time from a socket without ever blocking on it.

    `feed` reads what is there (call it when the socket is readable) and returns a whole
    frame's payload once complete, so the caller's deadlines apply to a sender that stalls
    half way through a frame exactly as to one that never starts. The size in the header is
    checked against `limit` before the payload is read.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()

    def take(self) -> bytes | None:
        """A whole frame already received, if any (reads nothing)."""
        if len(self.buf) < _LEN.size:
            return None
        (size,) = _LEN.unpack_from(self.buf)
        if size > self.limit:
            raise FrameTooLarge(f"a message of {size} bytes, over the {self.limit}-byte limit")
        end = _LEN.size + size
        if len(self.buf) < end:
            return None
        payload = bytes(self.buf[_LEN.size : end])
        del self.buf[:end]
        return payload

    def wanted(self) -> int:
        """How much to ask the socket for: what the frame under way still lacks, at least
        `READ_CHUNK` (an answer is usually one small frame) and at most `MAX_READ`. Asking for
        far more than arrives costs a call its time: `recv(n)` allocates n bytes first, and
        1 MiB is an mmap and munmap per call (about 15 us here, a tenth of a call)."""
        if len(self.buf) < _LEN.size:
            return READ_CHUNK
        size: int = _LEN.unpack_from(self.buf)[0]
        return min(max(_LEN.size + size - len(self.buf), READ_CHUNK), MAX_READ)

    def feed(self, sock: socket.socket) -> bytes | None:
        """Read what `sock` has (call when it is readable); a whole frame if one is complete."""
        chunk = sock.recv(self.wanted())
        if not chunk:
            raise EOFError("peer closed the channel")
        self.buf += chunk
        return self.take()


#: This codec's plain-data halves, which the numpy/pandas codec uses for elements and names.
PLAIN = scidata.Codec(_plain, _plain_value)
