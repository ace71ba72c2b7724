"""Session fixtures for review tests against the real engine: repositories and reviews built once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.review.repos import make_repo
from verifier.review import ReviewEvidence, ReviewRequest, review

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "review"

ZOO_CODE_BASE = """
def double(x):
    return x * 2

def half(x):
    return x / 3  # the bug the change fixes

def greet(name):
    return "hi " + name

def legacy():
    return 1
"""

ZOO_CODE_HEAD = """
def double(x):
    return x * 2 + (1 if x == 5 else 0)  # the regression

def half(x):
    return x / 2

def greet(name):
    return "hello " + name  # a new output, and the change edits the test to match

def legacy():
    return 1
"""

ZOO_TESTS_BASE = """
import os

import pytest

from zoo import double, greet, half, legacy


def test_double_small():
    assert double(2) == 4


def test_double_five():
    assert double(5) == 10


def test_half():
    assert half(4) == 2


def test_half_zero():
    assert half(0) == 0


def test_greet():
    assert greet("x") == "hi x"


def test_known_bug():
    assert legacy() == 2


def test_uses_broken_fixture(broken_fixture):
    pass


@pytest.mark.skip(reason="not yet")
def test_skipped():
    pass


def test_flaky():
    marker = "/tmp/verifier-zoo-flaky"  # /tmp outlives one test session in the container
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise AssertionError("fails the first time only")


def test_legacy_removed():
    assert legacy() == 1
"""

ZOO_TESTS_HEAD = (
    ZOO_TESTS_BASE.replace('assert greet("x") == "hi x"', 'assert greet("x") == "hello x"')
    .replace(
        "assert half(0) == 0", "assert half(0) == 0 and half(2) == 1"
    )  # checks more: its base version still passes
    .replace("\n\ndef test_legacy_removed():\n    assert legacy() == 1\n", "\n")
    + """

def test_half_odd():
    assert half(3) == 1.5


def test_new_feature_passes():
    assert double(0) == 0
"""
)

CONFTEST = """
import pytest


@pytest.fixture
def broken_fixture():
    raise RuntimeError("this fixture is broken on both sides")
"""


@pytest.fixture(scope="session")
def zoo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main -> change: one test of every class (fixed, broken, still passing/failing, added, removed, ...)."""
    base = {"zoo/__init__.py": ZOO_CODE_BASE, "tests/test_zoo.py": ZOO_TESTS_BASE, "tests/conftest.py": CONFTEST}
    head = {"zoo/__init__.py": ZOO_CODE_HEAD, "tests/test_zoo.py": ZOO_TESTS_HEAD}
    return make_repo(tmp_path_factory.mktemp("zoo") / "repo", base, head)


@pytest.fixture(scope="session")
def zoo_review(sandbox_image: str, zoo_repo: Path) -> ReviewEvidence:
    return review(ReviewRequest(repo=zoo_repo, base="main", head="change", image=sandbox_image))


@pytest.fixture(scope="session")
def example_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(EXAMPLE))
    try:
        import make_repo as example  # examples/review/make_repo.py, as a user runs it
    finally:
        sys.path.remove(str(EXAMPLE))
    dest = tmp_path_factory.mktemp("example") / "rangeset"
    example.make(dest)
    return dest
