from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given, settings
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


@given(
    st.dictionaries(
        st.lists(
            st.sampled_from(["a", "b", "pkg", "m.py", "x.py", "__pycache__", "y.pyc"]), min_size=1, max_size=3
        ).map("/".join),
        st.binary(max_size=64),
        max_size=6,
    )
)
@settings(max_examples=40, deadline=None)
def test_the_streamed_digest_of_a_folder_is_the_digest_of_its_files(
    tmp_path_factory: Any, files: dict[str, bytes]
) -> None:
    """One tree digest: a folder hashed file by file from disk (inputs._streamed_tree_sha256)
    equals tree_sha256 of the files it reads, and both leave out the same paths (one SKIP_DIRS)."""
    from pathlib import Path, PurePosixPath

    from verifier import inputs
    from verifier.hashing import left_out

    root = Path(tmp_path_factory.mktemp("tree"))
    written: dict[str, bytes] = {}
    for rel, data in sorted(files.items()):
        target = root / rel
        if any(p.is_file() for p in [target, *target.parents] if p != root and p.exists()) or target.is_dir():
            continue  # a path that is a file and a folder cannot be written; skip it
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written[rel] = data
    paths = inputs._tree_paths(root)
    kept = {rel: data for rel, data in written.items() if not left_out(PurePosixPath(rel))}
    assert {rel for rel, _ in paths} == set(kept)
    assert inputs._streamed_tree_sha256(paths) == tree_sha256(kept)
