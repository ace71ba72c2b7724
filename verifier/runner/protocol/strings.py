"""Text across the protocol: the one error, valid Unicode, and a trusted summary on one line."""

from __future__ import annotations

import re

from .constants import MAX_SUMMARY


class ProtocolError(ValueError):
    """A job or result that does not follow this protocol."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str, limit: int | None = None) -> str:
    """Valid Unicode (lone surrogates -> U+FFFD), at most `limit` characters."""
    text = _SURROGATE.sub("\ufffd", text)
    return text if limit is None or len(text) <= limit else text[:limit]


def summary_line(text: str) -> str:
    """A trusted summary on one line, bounded (control characters become spaces)."""
    text = clean(text)
    return "".join(ch if ch.isprintable() else " " for ch in text)[:MAX_SUMMARY]
