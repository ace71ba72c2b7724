"""Checks on the candidate's bytes before anything runs. The candidate is never executed here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verifier.errors import InvalidInput
from verifier.hashing import sha256_bytes

MAX_CANDIDATE_BYTES = 1024**2


@dataclass(frozen=True)
class Candidate:
    source: bytes
    sha256: str
    label: str

    def syntax_error(self) -> str | None:
        """A one-line description of the first syntax error, or None. Compiles, never runs."""
        try:
            compile(self.source, "solution.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:
            return f"the source cannot be compiled: {exc.__class__.__name__}"
        return None


def read_candidate(source: str | bytes | Path) -> Candidate:
    """Accept a Path (a file), str or bytes (the source). Raises InvalidInput when unusable."""
    if isinstance(source, Path):
        label = str(source)
        if not source.exists():
            raise InvalidInput(f"candidate file {source} does not exist")
        if not source.is_file():
            raise InvalidInput(f"candidate {source} is not a file")
        size = source.stat().st_size
        if size > MAX_CANDIDATE_BYTES:
            raise InvalidInput(f"candidate {source} is {size} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit")
        data = source.read_bytes()
    else:
        label = "<source>"
        data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    return validate(data, label)


def validate(data: bytes, label: str = "<source>") -> Candidate:
    if len(data) > MAX_CANDIDATE_BYTES:
        raise InvalidInput(f"candidate {label} is {len(data)} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit")
    if not data.strip():
        raise InvalidInput(f"candidate {label} is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InvalidInput(f"candidate {label} contains a NUL byte at offset {nul}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"candidate {label} is not UTF-8 (bad byte at offset {exc.start})") from exc
    return Candidate(source=data, sha256=sha256_bytes(data), label=label)
