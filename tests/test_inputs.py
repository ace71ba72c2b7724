from __future__ import annotations

import hashlib
import os
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
    ids=["empty", "blank", "nul", "not-utf8", "over-limit"],
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
    with pytest.raises(InvalidInput, match="holds no Python module"):
        read_candidate(tmp_path)  # a folder is a candidate folder: this one is empty


def test_a_candidate_folder_has_a_documented_machine_independent_digest(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_bytes(b"from .core import f\n")
    (tmp_path / "pkg" / "core.py").write_bytes(b"def f():\n    return 1\n")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"junk")
    cand = read_candidate(tmp_path)
    assert cand.kind == "tree" and cand.modules("solution") == ["pkg", "pkg.core"]
    # The digest documented in verifier/inputs.py, written out by hand.
    h = hashlib.sha256()
    for path, data in sorted(
        {"pkg/__init__.py": b"from .core import f\n", "pkg/core.py": b"def f():\n    return 1\n"}.items()
    ):
        h.update(len(path).to_bytes(8, "big") + path.encode() + len(data).to_bytes(8, "big") + data)
    assert cand.sha256 == h.hexdigest()
    os.chmod(tmp_path / "pkg" / "core.py", 0o600)  # modes and times are not part of it
    assert read_candidate(tmp_path).sha256 == cand.sha256


def test_candidate_folders_are_checked_file_by_file(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")
    with pytest.raises(InvalidInput, match="not UTF-8") as caught:
        read_candidate(tmp_path)
    assert caught.value.sha256 == read_candidate.__globals__["Candidate"].from_path(tmp_path).sha256
    assert "bad.py" in caught.value.detail_untrusted  # the name the candidate chose: untrusted detail only
    (tmp_path / "bad.py").write_text("def f(:\n")
    error = read_candidate(tmp_path).syntax_error()
    assert error is not None and error[0] == "line 1 of a folder's module" and error[1].startswith("bad.py: ")
    (tmp_path / "link.py").symlink_to("/etc/passwd")
    with pytest.raises(InvalidInput, match="symbolic link"):
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
