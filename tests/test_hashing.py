from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from verifier.hashing import evidence_id, sha256_bytes, tree_sha256


def test_sha256_matches_hashlib() -> None:
    assert sha256_bytes(b"abc") == hashlib.sha256(b"abc").hexdigest()


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.binary(max_size=8), max_size=4))
def test_tree_digest_ignores_insertion_order(files: dict[str, bytes]) -> None:
    assert tree_sha256(files) == tree_sha256(dict(reversed(list(files.items()))))


def test_tree_digest_is_not_fooled_by_moving_bytes_between_name_and_content() -> None:
    assert tree_sha256({"ab": b"c"}) != tree_sha256({"a": b"bc"})
    assert tree_sha256({"a": b"x", "b": b""}) != tree_sha256({"a": b"", "b": b"x"})


def test_evidence_id_changes_with_every_input() -> None:
    base = {"candidate_sha256": "c", "suite_sha256": "s", "image_id": "i", "limits": {"t": 1}}
    ids = {evidence_id(**base)}  # type: ignore[arg-type]
    for key, value in (
        ("candidate_sha256", "c2"),
        ("suite_sha256", "s2"),
        ("image_id", "i2"),
        ("limits", {"t": 2}),
    ):
        ids.add(evidence_id(**{**base, key: value}))  # type: ignore[arg-type]
    assert len(ids) == 5
