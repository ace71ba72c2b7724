"""Ranges are (start, end) pairs of ints, both ends included; a range set is a list of them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

Range = tuple[int, int]


def parse(text: str) -> list[Range]:
    """'1-3, 7, 10-12' -> [(1, 3), (7, 7), (10, 12)]. Raises ValueError on bad input."""
    out: list[Range] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        first, sep, last = part.partition("-")
        start = int(first)
        end = int(last) if sep else start
        if end < start:
            raise ValueError(f"range {part!r} ends before it starts")
        out.append((start, end))
    return out


def normalize(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, with overlapping ranges merged."""
    merged: list[Range] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def to_text(ranges: Iterable[Range]) -> str:
    """[(1, 3), (7, 7)] -> '1-3,7'."""
    return ",".join(f"{s}-{e}" if s != e else str(s) for s, e in ranges)


def total(ranges: Iterable[Range]) -> int:
    """How many integers the (normalized) ranges hold."""
    return sum(e - s + 1 for s, e in normalize(ranges))


def contains(ranges: list[Range], n: int) -> bool:
    """Whether `n` is in the normalized range set `ranges`."""
    i = bisect_right(ranges, (n, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= n <= ranges[i][1]
