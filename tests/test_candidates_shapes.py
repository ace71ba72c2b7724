"""Candidates as models write them: several modules in a folder (issue 10, item 2)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from verifier import Candidate, FailureKind, Status, Verifier

FIXTURES = ROOT / "tests" / "fixtures"
PACKAGE = FIXTURES / "shapes"


def documented_tree_digest(root: Path) -> str:
    """The digest as verifier/inputs.py documents it, computed here independently."""
    h = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for p in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        name = p.relative_to(root).as_posix().encode()
        data = p.read_bytes()
        h.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


@pytest.mark.docker
def test_a_three_module_package_verifies_with_its_tree_digest(verifier: Verifier) -> None:
    ev = verifier.check(PACKAGE, FIXTURES / "shapes_suite")
    assert ev.ok, [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in ev.failures]
    assert ev.candidate_kind == "tree"
    assert ev.candidate_sha256 == documented_tree_digest(PACKAGE)
    files = {p.relative_to(PACKAGE).as_posix(): p.read_text() for p in PACKAGE.rglob("*.py")}
    assert Candidate.from_files(files).sha256 == ev.candidate_sha256  # the same digest from memory


@pytest.mark.docker
def test_the_cli_takes_a_folder(tmp_path: Path) -> None:
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy)
    done = subprocess.run(
        [sys.executable, "-m", "verifier", "check", str(copy), "--suite", str(FIXTURES / "shapes_suite"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-1000:]
    assert f'"candidate_sha256": "{documented_tree_digest(copy)}"' in done.stdout


@pytest.mark.docker
def test_a_missing_module_the_suite_needs_is_the_candidates_error(verifier: Verifier, tmp_path: Path) -> None:
    partial = tmp_path / "pkg"
    shutil.copytree(PACKAGE, partial)
    (partial / "shapes" / "units.py").unlink()
    ev = verifier.check(partial, FIXTURES / "shapes_suite")
    assert ev.status is Status.ERROR and "shapes.units" in ev.reason


@pytest.mark.docker
def test_a_candidate_module_may_not_shadow_what_the_tests_use(verifier: Verifier) -> None:
    """Refused on the host before anything runs (issue 21): invalid input, naming the module."""
    ev = verifier.check(FIXTURES / "shadow", FIXTURES / "shadow_suite")  # it has json.py and hypothesis.py
    assert ev.status is Status.INVALID_INPUT, ev.reason
    assert "'hypothesis', a package of the sandbox image" in ev.reason
    assert ev.candidate_sha256 == Candidate.from_path(FIXTURES / "shadow").sha256
    assert any(f.kind is FailureKind.IMPORT_ERROR and "hypothesis.py" in f.detail_untrusted for f in ev.failures)
