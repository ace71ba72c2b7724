# expect: failed
# plain: failed
# technique: the answer is bytes-like (it has a buffer: bytearray, array, memoryview, a bytearray subclass, one the candidate keeps) where the suite requires it is not; a handle has no buffer in Python 3.11, so memoryview(), b"" + x and hashlib raised TypeError for it as for a plain object
import array

_kept = bytearray(b"kept")


class Blob(bytearray):
    pass


def packed():
    return bytearray(b"abc")


def numbers():
    return array.array("b", [1, 2])


def view():
    return memoryview(b"abc")


def blob():
    return Blob(b"x")


def kept():
    return _kept


def chunks():
    buf = bytearray(b"y")
    yield buf


BUFFER = bytearray(b"module")
