from __future__ import annotations

import math
import socket
import struct
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.runner import wire

hashables = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.complex_numbers(allow_nan=False),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=6,
)
plain = st.recursive(
    hashables,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(hashables, inner, max_size=3)
        | st.sets(hashables, max_size=3)
        | st.tuples(inner)
    ),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same exact types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@given(plain)
def test_round_trip_keeps_values_and_exact_types(value: Any) -> None:
    assert same(value, wire.decode(wire.encode(value)))


def test_special_floats_and_big_ints() -> None:
    for value in (float("inf"), -0.0, 2**200, -(2**70)):
        assert same(value, wire.decode(wire.encode(value)))
    assert math.isnan(wire.decode(wire.encode(float("nan"))))


class FakeList(list):  # type: ignore[type-arg]
    def __eq__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize("value", [FakeList(), object(), [1, FakeList()], {"k": object()}, True.__class__])
def test_non_plain_data_is_refused(value: Any) -> None:
    with pytest.raises(wire.BadWireValue, match="not plain data"):
        wire.encode(value)


def test_cycles_are_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(wire.BadWireValue, match="deeper"):
        wire.encode(loop)


def test_a_bytearray_is_a_value_only_as_an_unheld_answer() -> None:
    """`encode` refuses a bytearray (an argument's copy would not see a change made in place);
    the candidate's answer that nothing else holds crosses as `encode_bytearray`, and comes back
    as a bytearray of the same bytes."""
    with pytest.raises(wire.BadWireValue, match="not plain data"):
        wire.encode(bytearray(b"x"))
    got = wire.decode(wire.loads(wire.dumps(wire.encode_bytearray(bytearray(b"\x00ab"))), max_values=10))
    assert type(got) is bytearray and got == b"\x00ab"


@pytest.mark.parametrize(
    "bad", [["Q", 1], ["L"], {"a": 1}, 1.5, ["D", [[["L", []], 1]]], ["BA", "!!"], ["BA", [1]], ["B", "a b"]]
)
def test_decoder_refuses_malformed_input(bad: Any) -> None:
    with pytest.raises((wire.BadWireValue, TypeError, ValueError)):
        wire.decode(bad)


def test_frames_over_a_socket() -> None:
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"x": [1, 2]})
        assert wire.recv(b, limit=1024) == {"x": [1, 2]}
        a.close()
        with pytest.raises(EOFError):
            wire.recv(b, limit=1024)


def test_a_frame_over_the_limit_is_refused_before_its_payload_is_read() -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack(">I", 50 * 1024**2) + b"[")  # claims 50 MiB, sends one byte
        with pytest.raises(wire.FrameTooLarge):
            wire.recv(b, limit=1024**2, deadline=time.monotonic() + 5)


def test_a_sender_that_stalls_inside_a_frame_meets_the_deadline() -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"\x00")  # one byte of the length header, then nothing
        started = time.monotonic()
        with pytest.raises(wire.FrameTimeout):
            wire.recv(b, limit=1024, deadline=started + 0.3)
        assert time.monotonic() - started < 5


def test_frame_reader_assembles_pieces_and_keeps_the_rest() -> None:
    a, b = socket.socketpair()
    with a, b:
        payload = wire.dumps({"value": 1})
        data = struct.pack(">I", len(payload)) + payload
        reader = wire.FrameReader(1024)
        a.sendall(data[:3])
        assert reader.feed(b) is None
        a.sendall(data[3:] + data)  # the rest of this frame and a whole second one
        assert reader.feed(b) == payload
        assert reader.take() == payload
        assert reader.take() is None


def test_decoding_is_bounded_by_the_number_of_values() -> None:
    bomb = b"[" + b"[]," * 10_000 + b"[]]"
    with pytest.raises(wire.FrameTooLarge):
        wire.loads(bomb, max_values=1000)
    assert len(wire.loads(bomb, max_values=30_000)) == 10_001


@given(
    st.decimals(allow_nan=True)
    | st.fractions()
    | st.builds(slice, st.none() | st.integers(), st.none() | st.integers(), st.none() | st.integers())
    | st.builds(range, st.integers(-5, 5), st.integers(-5, 5), st.integers(1, 3))
)
def test_exact_number_types_slices_and_ranges_cross_exactly(value: Any) -> None:
    back = wire.decode(wire.loads(wire.dumps(wire.encode(value)), max_values=10_000))
    assert type(back) is type(value)
    assert str(back) == str(value) and repr(back) == repr(value)  # Decimal: digits, exponent, sign, NaN kind


def test_subclasses_of_the_number_types_are_not_values() -> None:
    import decimal
    import fractions

    class D(decimal.Decimal):
        def __eq__(self, other: object) -> bool:
            return True

    class F(fractions.Fraction):
        pass

    for value in (D("1"), F(1, 2)):
        with pytest.raises(wire.BadWireValue):
            wire.encode(value)


@pytest.mark.parametrize(
    "bad",
    [
        ["R", [["f", "0x1p+0"], 2, 1]],
        ["R", [0, 2, 0]],
        ["FR", [1, "2"]],
        ["FR", [1, 0]],
        ["DE", "not a number"],
        ["DE", 5],
        ["SL", [1, 2]],
    ],
)
def test_malformed_number_values_are_refused(bad: Any) -> None:
    """Only BadWireValue: any other exception would reach the test as if the candidate raised it."""
    with pytest.raises(wire.BadWireValue):
        wire.decode(bad)
