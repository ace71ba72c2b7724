# technique: non-ASCII output under the cap (6 JSON bytes a character) and long emoji messages
import sys

_said = []


def find_duplicates(values):
    if not _said:
        _said.append(1)
        sys.stdout.write("\u00e9" * 30_000)  # once per candidate process: 16 x 60 KB
        sys.stdout.flush()
    raise ValueError("\U0001f600" * 300_000)
