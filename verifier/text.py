"""Text that crosses a trust boundary: made valid, visible and bounded.

Candidate-controlled strings reach JSON encoders, databases, grading models and terminals.
Three rules, applied here for the host (inside the sandbox, which imports nothing of
`verifier`, `runner/protocol/strings.py` has the runner's own `clean` and `summary_line`, and the host
checks every string of a result again when it parses it):

- `clean`: always valid Unicode that encodes to UTF-8 (lone surrogates become U+FFFD), so no
  candidate string can make serialising evidence fail.
- `visible`: control characters (C0, DEL, C1) and invisible format characters (bidi overrides,
  zero-width marks) are shown as escapes such as ``\\x1b`` or ``\\u202e``, so nothing the candidate
  chose can drive a terminal or hide text; newlines and tabs are kept unless `keep_newlines=False`.
- `one_line`: `visible`, on one line, cut to a length: for fields shown outside untrusted fences.

And `shown_name` for names that identify something (a repository's file names, test ids): valid
Unicode like `clean`, but never two names shown alike.
"""

from __future__ import annotations

import re
import unicodedata

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD: always encodable as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


_C_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
}


def shown_name(name: str) -> str:
    """A name read with ``surrogateescape`` (a file name that is not valid UTF-8, a test id made
    from one), shown as valid Unicode without ever showing two names alike: unchanged when it is
    valid Unicode and does not start with ``"``; else quoted as git quotes names, in double quotes
    with C escapes (``"tests/test_\\351.py"``: each byte that is not UTF-8 as its octal escape,
    ``"`` and ``\\`` escaped, control characters as ``\\n`` or octal, other lone surrogates as
    ``\\udXXX``). Unquoted names never start with ``"``, so the two forms cannot meet.
    """
    if not _SURROGATE.search(name) and not name.startswith('"'):
        return name
    out = []
    for ch in name:
        code = ord(ch)
        if ch in _C_ESCAPES:
            out.append(_C_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\{code - 0xDC00:03o}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _is_hidden(ch: str, keep_newlines: bool) -> bool:
    if ch in "\n\t":
        return not keep_newlines
    code = ord(ch)
    if code < 0x20 or 0x7F <= code < 0xA0:
        return True
    # Cf: format characters (bidi overrides and isolates, zero-width joiners, BOM, ...).
    return code > 0xA0 and unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Co", "Cs", "Cn")


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """`clean(text)` with control and invisible format characters written as escapes."""
    text = clean(text)
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(ch) if _is_hidden(ch, keep_newlines) else ch for ch in text)


def one_line(text: str, limit: int = 300) -> str:
    """`visible` on a single line (newlines and tabs escaped too), at most `limit` characters."""
    out = visible(text, keep_newlines=False)
    if len(out) > limit:
        out = out[: max(0, limit - 12)] + " [truncated]"
    return out
