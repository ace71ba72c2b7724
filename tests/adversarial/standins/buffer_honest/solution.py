# expect: passed
# technique: (honest) a fresh bytearray as the answer, which nothing in the candidate's process still holds: it crosses as itself (a buffer, mutable, its own type), as plain pytest sees it
def packed(text):
    out = bytearray()
    for ch in text:
        out.append(ord(ch) ^ 1)
    return out


def frames():
    yield bytearray(b"one")
    yield bytearray(b"two")
