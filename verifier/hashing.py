"""Content digests that bind evidence to exactly what ran."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

#: Folders a tree read from disk leaves out (caches, version control), for candidates and suites
#: alike, and the files (compiled code) it leaves out with them.
SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", ".git"})


def left_out(rel: PurePath) -> bool:
    """Whether a path read from a folder on disk is left out of its tree (and of its digest)."""
    return rel.suffix == ".pyc" or any(part in SKIP_DIRS for part in rel.parts)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_sha256(files: Mapping[str, bytes]) -> str:
    """Digest of a set of files: relative POSIX paths and bytes, in sorted order.

    Each entry is length-prefixed, so no two different trees share a digest by
    concatenation tricks.

    The paths must be a canonical tree (`verifier.runner.trees`, docs/architecture.md): normalised
    relative POSIX paths in Unicode NFC, with no empty, `.` or `..` component, no backslash,
    control or invisible character, no name ending in a space or a dot, no two paths that are one
    file on a case-insensitive or normalising disk, no path that is both a file and a folder, no
    module defined twice (`m.py` and a folder `m/` of Python files), no compiled code, and every
    name and path short enough for the sandbox to create. Then each file in the digest is
    exactly one file the sandbox writes, and no two trees that deploy alike hash apart. A
    candidate folder is refused, never repaired, before it is hashed when it is not canonical
    (`verifier.inputs.canonical_tree`, run whenever a `Candidate` is made); a suite is read from
    a folder on disk, which gives each file one path.
    """
    h = hashlib.sha256()
    for path in sorted(files):
        name = path.encode("utf-8")
        data = files[path]
        h.update(len(name).to_bytes(8, "big") + name)
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def evidence_id(
    *,
    candidate_sha256: str,
    suite_sha256: str,
    image_id: str,
    limits: Mapping[str, Any],
    environment: Mapping[str, Any] | None = None,
    program: Mapping[str, Any] | None = None,
) -> str:
    """The identity of one verification: same inputs, same id (and, by design, same verdict).
    `environment` (a suite's packages: digest, image id, requirement lines) is part of it when
    the suite declares any; without it the id is what it always was. So is `program` (a program's
    language and toolchain) for a program in another language than Python."""
    what: dict[str, Any] = {
        "candidate_sha256": candidate_sha256,
        "suite_sha256": suite_sha256,
        "image_id": image_id,
        "limits": dict(limits),
    }
    if environment is not None:
        what["environment"] = dict(environment)
    if program is not None:  # a program in another language than Python: its language and toolchain
        what["program"] = dict(program)
    return sha256_bytes(canonical_json(what))
