"""The candidate: its bytes and their digest, checked before anything runs. Never executed here.

A refusal is bound to content too: `InvalidInput.sha256` names the refused bytes whenever
there were bytes to read (an empty file, invalid UTF-8, a NUL byte, a file over the limit).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from verifier.errors import InvalidInput
from verifier.hashing import sha256_bytes

MAX_CANDIDATE_BYTES = 1024**2


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _looks_like_a_path(text: str) -> bool:
    if "\n" in text or len(text) > 4096 or not text.strip():
        return False
    stripped = text.strip()
    try:
        return stripped.endswith(".py") or Path(stripped).exists()
    except OSError:
        return False


@dataclass(frozen=True)
class Candidate:
    """The code to verify, as bytes. Build one with `from_path`, `from_text` or `from_bytes`."""

    source: bytes
    label: str = "<source>"

    @property
    def sha256(self) -> str:
        """SHA-256 of the source bytes (what `sha256sum` prints for the file)."""
        return sha256_bytes(self.source)

    @classmethod
    def from_bytes(cls, data: bytes, label: str = "<source>") -> Candidate:
        return cls(source=bytes(data), label=label)

    @classmethod
    def from_text(cls, text: str, label: str = "<source>") -> Candidate:
        """The source as UTF-8. A lone surrogate is kept as the bytes it stands for, which
        `validate` then refuses as not UTF-8 (naming those bytes)."""
        return cls(source=text.encode("utf-8", "surrogatepass"), label=label)

    @classmethod
    def from_path(cls, path: Path | str) -> Candidate:
        """Read a candidate file. Raises InvalidInput when it is missing, not a file or too big."""
        path = Path(path)
        if not path.exists():
            raise InvalidInput(f"candidate file {path} does not exist")
        if not path.is_file():
            raise InvalidInput(f"candidate {path} is not a file")
        size = path.stat().st_size
        if size > MAX_CANDIDATE_BYTES:
            raise InvalidInput(
                f"candidate {path} is {size} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit",
                sha256=_file_sha256(path),
            )
        return cls(source=path.read_bytes(), label=str(path))

    @classmethod
    def coerce(cls, value: Path | Candidate | str | bytes) -> Candidate:
        """A Candidate from what `Verifier.check` accepts.

        `str` and `bytes` are source code; a `str` that looks like a file name is refused with
        a TypeError (pass `Path(...)` to verify a file, `Candidate.from_text(...)` to insist).
        """
        if isinstance(value, Candidate):
            return value
        if isinstance(value, Path):
            return cls.from_path(value)
        if isinstance(value, str):
            if _looks_like_a_path(value):
                raise TypeError(
                    f"the candidate {value[:80]!r} looks like a file name, but a str is read as source code: "
                    "pass Path(...) to verify a file, or Candidate.from_text(...) if it really is the source"
                )
            return cls.from_text(value)
        if isinstance(value, (bytes, bytearray)):
            return cls.from_bytes(bytes(value))
        raise TypeError(f"a candidate is a Path, a Candidate, or source as str/bytes, not {type(value).__name__}")

    def validate(self) -> Candidate:
        """This candidate, or InvalidInput (naming its bytes) when they cannot be verified."""
        data, label = self.source, self.label

        def refuse(why: str) -> InvalidInput:
            return InvalidInput(f"candidate {label} {why}", sha256=self.sha256)

        if len(data) > MAX_CANDIDATE_BYTES:
            raise refuse(f"is {len(data)} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit")
        if not data.strip():
            raise refuse("is empty")
        nul = data.find(b"\x00")
        if nul >= 0:
            raise refuse(f"contains a NUL byte at offset {nul}")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refuse(f"is not UTF-8 (bad byte at offset {exc.start})") from exc
        return self

    def syntax_error(self) -> tuple[str, str] | None:
        """(where, what) of the first syntax error, or None. Compiles, never runs.

        `where` ("line 3") is ours; `what` is the parser's message, which may quote the
        candidate (an encoding name, a character), so it is untrusted text.
        """
        try:
            compile(self.source, "solution.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return (f"line {exc.lineno}" if isinstance(exc.lineno, int) else "an unknown line"), str(exc.msg)
        except (ValueError, RecursionError, MemoryError) as exc:
            return "the whole file", f"the source cannot be compiled: {exc.__class__.__name__}"
        return None


def read_candidate(source: Path | Candidate | str | bytes) -> Candidate:
    """`Candidate.coerce(source).validate()`: a usable candidate, or InvalidInput."""
    return Candidate.coerce(source).validate()
