import hashlib

from solution import frames, packed


def test_a_fresh_bytearray_is_one():
    got = packed("abc")
    assert type(got) is bytearray
    assert memoryview(got).tobytes() == b"`cb"
    assert b"" + got == b"`cb"
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(b"`cb").hexdigest()
    got[0] = 0
    assert got == bytearray(b"\x00cb")


def test_yielded_fresh_bytearrays():
    assert [bytes(f) for f in frames()] == [b"one", b"two"]
    assert all(type(f) is bytearray for f in frames())
