from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SUITE
from verifier.errors import InvalidInput
from verifier.hashing import tree_sha256
from verifier.limits import Limits
from verifier.suite import Suite, load_suite, parse_manifest


def test_example_suite_loads_with_manifest() -> None:
    suite = load_suite(SUITE)
    assert suite.module == "solution"
    assert suite.max_examples == 200
    assert set(suite.test_files) == {"test_examples.py", "test_properties.py"}
    assert suite.sha256 == load_suite(SUITE).sha256


def test_caches_are_ignored_and_content_changes_the_digest(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    first = load_suite(tmp_path).sha256
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert load_suite(tmp_path).sha256 == first
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert 1\n")
    assert load_suite(tmp_path).sha256 != first


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ({}, "no tests"),
        ({"test_a.py": ""}, "no tests"),
        ({"helper.py": "x = 1"}, "no tests"),
        ({"test_a.py": "def test(): pass", "suite.toml": "module = ["}, "not valid TOML"),
        ({"test_a.py": "def test(): pass", "suite.toml": 'module = "a-b"'}, "identifier"),
        ({"test_a.py": "def test(): pass", "suite.toml": '[limits]\ntimeout_s = "abc"'}, r"\[limits\] timeout_s"),
        ({"test_a.py": "def test(): pass", "suite.toml": "[limits]\nmemory_bytes = 1"}, "memory_bytes.*33554432"),
        ({"test_a.py": "def test(): pass", "suite.toml": "[limits]\ntimeout = 3"}, "unknown key 'timeout'.*timeout_s"),
        ({"test_a.py": "def test(): pass", "suite.toml": "[hypothesis]\nmax_example = 3"}, "unknown key.*max_examples"),
        ({"test_a.py": "def test(): pass", "suite.toml": 'runner = "nose"'}, "runner.*'pytest' or 'direct'"),
        ({"test_a.py": "def test(): pass", "suite.toml": 'candidate_process = "x"'}, "per-test"),
        ({"test_a.py": "def test(): pass", "suite.toml": 'trusted_process = "x"'}, "per-job"),
        ({"test_a.py": "def test(): pass", "suite.toml": 'trusted_process = "shared"'}, "shared.*runner = 'direct'"),
    ],
)
def test_bad_suites(tmp_path: Path, files: dict[str, str], words: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(InvalidInput, match=words) as caught:
        load_suite(tmp_path)
    assert str(caught.value).count("\n") == 0  # one line
    assert caught.value.sha256 == tree_sha256({n: t.encode() for n, t in files.items()})  # names what it refused


def test_suite_limits_are_validated_as_a_whole() -> None:
    suite = Suite(files={"test_a.py": b""}, manifest=parse_manifest(b"[limits]\ntimeout_s = 5\n"))
    merged = suite.limits(Limits(call_timeout_s=2))
    assert (merged.timeout_s, merged.call_timeout_s) == (5, 2)


def test_missing_suite(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        load_suite(tmp_path / "nope")
