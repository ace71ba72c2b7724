from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from verifier.errors import InvalidInput
from verifier.inputs import MAX_CANDIDATE_BYTES, Candidate, read_candidate


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
def test_bad_bytes_are_invalid_input_that_names_the_bytes(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "c.py"
    path.write_bytes(data)
    with pytest.raises(InvalidInput, match=words) as caught:
        read_candidate(path)
    assert caught.value.sha256 == hashlib.sha256(data).hexdigest()


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist") as caught:
        read_candidate(tmp_path / "nope.py")
    assert caught.value.sha256 == ""  # no bytes were there to name
    with pytest.raises(InvalidInput, match="not a file"):
        read_candidate(tmp_path)


def test_syntax_error_is_reported_with_line_number_without_running() -> None:
    error = read_candidate("x = 1\ndef f(:\n    pass\n").syntax_error()
    assert error is not None
    assert error[0] == "line 2"
    assert read_candidate("import os\nos._exit(3)\n").syntax_error() is None


def test_pathological_nesting_does_not_crash_the_host() -> None:
    assert read_candidate("x = " + "(" * 100_000).syntax_error() is not None


def test_a_str_that_looks_like_a_path_is_refused_as_a_call_error(tmp_path: Path) -> None:
    path = tmp_path / "solution.py"
    path.write_text("def f():\n    return 1\n")
    for text in (str(path), "solution.py", "examples/find_duplicates/good.py"):
        with pytest.raises(TypeError, match="looks like a file name"):
            Candidate.coerce(text)
    assert Candidate.coerce(path).source == path.read_bytes()
    assert Candidate.coerce(Candidate.from_text("solution.py")).source == b"solution.py"
    assert Candidate.coerce("x = 1").source == b"x = 1"
    with pytest.raises(TypeError, match="not int"):
        Candidate.coerce(3)  # type: ignore[arg-type]


def test_text_with_a_lone_surrogate_is_refused_and_named() -> None:
    candidate = Candidate.from_text("x = '\ud800'")
    with pytest.raises(InvalidInput, match="not UTF-8") as caught:
        candidate.validate()
    assert caught.value.sha256 == candidate.sha256 == hashlib.sha256(b"x = '\xed\xa0\x80'").hexdigest()
