"""The evidence store of a bench run: every evidence as one JSON line, keyed by `evidence_id`,
appended (and flushed) the moment it arrives, so a run stopped by Ctrl-C or a crash keeps all it
finished, and the same command verifies only what is missing.

An evidence_id is a digest of the candidate, the suite, the image and the limits: the same id is
the same verification, so its verdict can be served again (`cached` true). Only verdicts are
served (`is_verdict`: the candidate's doing or a pass); an infra error or a busy host's
`overloaded` is kept for inspection and run again. A torn last line (a crash in the middle of a
write) is dropped when the store is opened; any other line that is not an evidence record is an
error naming it, never skipped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from verifier.evidence import Evidence, is_verdict


def store_path(samples: Path) -> Path:
    """Where a samples file's evidence store lives: beside its `_results.jsonl`."""
    return Path(f"{samples}_evidence.jsonl")


class EvidenceStore:
    """Append-only JSONL of `Evidence`, opened for one run (a context manager)."""

    def __init__(self, path: Path, *, fresh: bool = False) -> None:
        """Open (or create) the store at `path`; `fresh` starts it empty (`--no-cache`).
        Raises ValueError naming a line that is not an evidence record, OSError when the file
        cannot be read or written."""
        self.path = path
        self._verdicts: dict[str, Evidence] = {}
        self.lines = 0
        if not fresh and path.exists():
            self._load(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(path, "w" if fresh else "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def _load(self, path: Path) -> None:
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        torn = data[end:]
        if torn.strip():
            try:
                Evidence.model_validate_json(torn)
            except ValidationError:  # a write the process did not finish: drop it
                with open(path, "r+b") as fh:
                    fh.truncate(end)
            else:  # a whole record without its newline (written by hand): keep it
                with open(path, "ab") as fh:
                    fh.write(b"\n")
                end = len(data) + 1
                data += b"\n"
        for number, line in enumerate(data[:end].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                ev = Evidence.model_validate_json(line)
            except ValidationError:
                raise ValueError(
                    f"{path}:{number}: not an evidence record (remove the file, or rerun with --no-cache)"
                ) from None
            self.lines += 1
            if is_verdict(ev.status):
                self._verdicts[ev.evidence_id] = ev

    def get(self, evidence_id: str | None) -> Evidence | None:
        """The stored verdict of `evidence_id` (marked `cached`), or None."""
        ev = self._verdicts.get(evidence_id) if evidence_id is not None else None
        return None if ev is None else ev.model_copy(update={"cached": True})

    def __len__(self) -> int:
        """Distinct evidence ids with a verdict in the store."""
        return len(self._verdicts)

    def add(self, ev: Evidence) -> None:
        """Append `ev` as one line and flush it to the operating system."""
        if self._fh is None:
            raise ValueError(f"{self.path}: the store is closed")
        self._fh.write(ev.to_json(indent=None) + "\n")
        self._fh.flush()
        self.lines += 1
        if is_verdict(ev.status):
            self._verdicts[ev.evidence_id] = ev

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            finally:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> EvidenceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
