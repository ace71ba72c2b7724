"""Content digests that bind evidence to exactly what ran."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_sha256(files: Mapping[str, bytes]) -> str:
    """Digest of a set of files: relative POSIX paths and bytes, in sorted order.

    Each entry is length-prefixed, so no two different trees share a digest by
    concatenation tricks.
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


def evidence_id(*, candidate_sha256: str, suite_sha256: str, image_id: str, limits: Mapping[str, Any]) -> str:
    """The identity of one verification: same inputs, same id (and, by design, same verdict)."""
    return sha256_bytes(
        canonical_json(
            {
                "candidate_sha256": candidate_sha256,
                "suite_sha256": suite_sha256,
                "image_id": image_id,
                "limits": dict(limits),
            }
        )
    )
