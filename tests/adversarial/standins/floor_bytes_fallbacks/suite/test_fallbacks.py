import math

from solution import amount, blob


def test_floor():
    assert math.floor(amount(2.5)) == 2


def test_ceil():
    assert math.ceil(amount(2.5)) == 3


def test_bytes():
    assert bytes(blob(b"ok")) == b"ok"
