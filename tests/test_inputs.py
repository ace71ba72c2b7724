from __future__ import annotations

from pathlib import Path

import pytest

from verifier.errors import InvalidInput
from verifier.inputs import MAX_CANDIDATE_BYTES, read_candidate


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "empty"),
        (b"   \n\t", "empty"),
        (b"x = 1\x00", "NUL byte"),
        (b"x = '\xff'", "not UTF-8"),
        (b"#" * (MAX_CANDIDATE_BYTES + 1), "over the"),
    ],
)
def test_bad_bytes_are_invalid_input(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "c.py"
    path.write_bytes(data)
    with pytest.raises(InvalidInput, match=words):
        read_candidate(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        read_candidate(tmp_path / "nope.py")
    with pytest.raises(InvalidInput, match="not a file"):
        read_candidate(tmp_path)


def test_syntax_error_is_reported_with_line_number_without_running() -> None:
    cand = read_candidate("x = 1\ndef f(:\n    pass\n")
    assert cand.syntax_error() is not None
    assert cand.syntax_error().startswith("line 2")  # type: ignore[union-attr]
    assert read_candidate("import os\nos._exit(3)\n").syntax_error() is None


def test_pathological_nesting_does_not_crash_the_host() -> None:
    assert read_candidate("x = " + "(" * 100_000).syntax_error() is not None
