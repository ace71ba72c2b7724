# technique: invalid UTF-8 on stdout under the cap (U+FFFD, 6 JSON bytes each) and lone surrogates
import os

_said = []


def find_duplicates(values):
    if not _said:
        _said.append(1)
        os.write(1, b"\xff" * 60_000)  # once per candidate process: 16 x 60 KB
    raise ValueError("\udc80\ud800" * 200_000)
