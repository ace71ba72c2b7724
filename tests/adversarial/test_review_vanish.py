"""Code cannot make its judge vanish (issue 32, section 5): real repositories, the real engine.

Each change below touches only code. It breaks `contains()` at its upper end and hides the tests
that would say so, at import or collection time, from the code under test: a module
`__getattr__` that skips the importing test module (`pytest.skip`, `unittest.SkipTest`, a
subclass of it, `pytest.importorskip`), an import hook, a `sys.modules` entry, a package
`__path__`, `pytestmark` or `pytest_plugins` the tests take from the code by a star import, a
fixture the code provides that skips or xfails, `pytest.xfail` in the code, a plugin the
project's own entry points install, a base class that stops being collectable, a test file the
code empties. The review must say **broken** (blocking), never "removed" or "still passing".

Honest changes stay fair: a test skipped by its own `skipif` on both sides stays skipped, a test
the change deletes or renames in a test file is removed, and neither blocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review.repos import add_branch, make_repo
from verifier.review import ReviewEvidence, ReviewRequest, review

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LIB = '''\
SENTINEL = 1


class Checks:
    """A base class the tests inherit (code-side)."""


def contains(lo, hi, x):
    return lo <= x <= hi
'''

TESTING = """\
import pytest


@pytest.fixture
def span():
    return (1, 3)
"""

FIRST = """\
import lib


def test_first():
    assert lib.contains(0, 2, 1)
"""

CONTAINS = """\
from lib import *  # noqa: F403
from lib import SENTINEL, Checks, contains
from lib.testing import span  # noqa: F401


def test_inside(span):
    assert contains(*span, 2) and SENTINEL


def test_low_end(span):
    assert contains(*span, 1)


def test_high_end(span):
    assert contains(*span, 3)


class TestClassy(Checks):
    def test_high_end_again(self):
        assert contains(1, 3, 3)
"""

PLATFORM = """\
import sys

import pytest


@pytest.mark.skipif(sys.platform == "linux", reason="not on this platform")
def test_elsewhere():
    assert False
"""

BASE = {
    "lib/__init__.py": LIB,
    "lib/testing.py": TESTING,
    "tests/__init__.py": "",
    "tests/test_a_first.py": FIRST,
    "tests/test_contains.py": CONTAINS,
    "tests/test_platform.py": PLATFORM,
}

BROKEN_LIB = LIB.replace("lo <= x <= hi", "lo <= x < hi")
NO_SENTINEL = BROKEN_LIB.replace("SENTINEL = 1\n", "")
GETATTR = (
    NO_SENTINEL
    + """

def __getattr__(name):
    if name == "SENTINEL":
        {action}
    raise AttributeError(name)
"""
)
#: The test module's file, as the running pytest sees it (tests/ is a package in the work dir).
REAL = 'os.path.abspath("tests/test_contains.py")'

ATTACKS: dict[str, dict[str, str]] = {
    "getattr-pytest-skip": {
        "lib/__init__.py": GETATTR.format(action='import pytest\n        pytest.skip("moved", allow_module_level=True)')
    },
    "getattr-unittest-skiptest": {
        "lib/__init__.py": GETATTR.format(action='import unittest\n        raise unittest.SkipTest("moved")')
    },
    "getattr-skiptest-subclass": {
        "lib/__init__.py": GETATTR.format(
            action="import unittest\n\n        class Moved(unittest.SkipTest):\n            pass\n\n"
            '        raise Moved("moved")'
        )
    },
    "getattr-importorskip": {
        "lib/__init__.py": GETATTR.format(action='import pytest\n        pytest.importorskip("no_such_module_here")')
    },
    "meta-path-finder": {
        "lib/__init__.py": BROKEN_LIB
        + f"""
import importlib.abc
import importlib.machinery
import os
import sys


class _Empty(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "tests.test_contains":
            return importlib.machinery.ModuleSpec(name, self, origin={REAL})
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = {REAL}


sys.meta_path.insert(0, _Empty())
"""
    },
    "sys-modules-entry": {
        "lib/__init__.py": BROKEN_LIB
        + f"""
import os
import sys
import types

_fake = types.ModuleType("tests.test_contains")
_fake.__file__ = {REAL}
sys.modules["tests.test_contains"] = _fake
"""
    },
    "package-path": {
        "lib/__init__.py": BROKEN_LIB
        + f"""
import os
import sys
import tempfile

_elsewhere = tempfile.mkdtemp()
with open(os.path.join(_elsewhere, "test_contains.py"), "w") as _fh:
    _fh.write("import os\\n__file__ = " + repr({REAL}) + "\\n")
sys.modules["tests"].__path__.insert(0, _elsewhere)
"""
    },
    "pytestmark-xfail-from-code": {
        "lib/__init__.py": BROKEN_LIB + '\nimport pytest\n\npytestmark = pytest.mark.xfail(reason="known")\n'
    },
    "pytest-plugins-from-code": {
        "lib/__init__.py": BROKEN_LIB + '\npytest_plugins = ["lib.deselect"]\n',
        "lib/deselect.py": """
def pytest_collection_modifyitems(config, items):
    gone = [i for i in items if "test_contains" in i.nodeid]
    items[:] = [i for i in items if i not in gone]
    config.hook.pytest_deselected(items=gone)
""",
    },
    "entry-point-plugin": {
        "lib/__init__.py": BROKEN_LIB,
        "pyproject.toml": '[project]\nname = "lib"\nversion = "1"\n\n'
        '[project.entry-points.pytest11]\nlib = "lib.deselect"\n',
        "lib/deselect.py": """
def pytest_collection_modifyitems(config, items):
    gone = [i for i in items if "test_contains" in i.nodeid]
    items[:] = [i for i in items if i not in gone]
    config.hook.pytest_deselected(items=gone)
""",
    },
    "fixture-from-code-xfails": {
        "lib/__init__.py": BROKEN_LIB,
        "lib/testing.py": TESTING.replace("return (1, 3)", 'pytest.xfail("known")'),
    },
    "xfail-from-the-code": {
        "lib/__init__.py": BROKEN_LIB.replace(
            "    return lo <= x < hi",
            '    if x == hi:\n        import pytest\n        pytest.xfail("edge")\n    return lo <= x < hi',
        )
    },
    "base-class-not-a-test": {
        "lib/__init__.py": BROKEN_LIB.replace('"""A base class the tests inherit (code-side)."""', "__test__ = False")
    },
    "base-class-with-init": {
        "lib/__init__.py": BROKEN_LIB.replace(
            '"""A base class the tests inherit (code-side)."""', "def __init__(self):\n        pass"
        )
    },
    "code-empties-a-test-file": {
        "lib/__init__.py": BROKEN_LIB + '\nimport os\n\nif os.path.exists("tests/test_contains.py"):\n'
        '    open("tests/test_contains.py", "w").close()\n'
    },
}

#: Neighbours that already showed as broken before this fix (a skip of a test that passed on the
#: base): kept here so that they stay broken.
HELD: dict[str, dict[str, str]] = {
    "pytestmark-skip-from-code": {
        "lib/__init__.py": BROKEN_LIB + '\nimport pytest\n\npytestmark = pytest.mark.skip(reason="later")\n'
    },
    "fixture-from-code-skips": {
        "lib/__init__.py": BROKEN_LIB,
        "lib/testing.py": TESTING.replace("return (1, 3)", 'pytest.skip("later")'),
    },
    "warnings-into-errors": {
        "lib/__init__.py": "import warnings\n\nwarnings.simplefilter('error')\n\n"
        + BROKEN_LIB.replace('"""A base class the tests inherit (code-side)."""', "def __init__(self):\n        pass")
    },
}

#: The tests of `contains`' upper end: the change breaks them, whatever hides them.
HIGH_END = ("tests/test_contains.py::test_high_end", "tests/test_contains.py::TestClassy::test_high_end_again")
HIDES_CLASS_ONLY = {"base-class-not-a-test", "base-class-with-init"}

HONEST: dict[str, dict[str, str | None]] = {
    # A refactor that keeps behaviour: the platform-skipped test is skipped on both sides.
    "refactor": {"lib/__init__.py": LIB.replace("lo <= x <= hi", "not (x < lo or x > hi)")},
    # The change deletes one test and renames another, in a test file.
    "delete-and-rename": {
        "tests/test_contains.py": CONTAINS.replace(
            "\ndef test_low_end(span):\n    assert contains(*span, 1)\n\n", ""
        ).replace("def test_inside(", "def test_inside_renamed(")
    },
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("vanish") / "repo", BASE)
    for name, files in {**ATTACKS, **HELD, **HONEST}.items():
        add_branch(root, name, files)
    return root


def run(repo: Path, head: str, image: str) -> ReviewEvidence:
    return review(ReviewRequest(repo=repo, base="main", head=head, image=image, cache=False))


def rows(ev: ReviewEvidence) -> dict[str, tuple[str, bool]]:
    return {r.test_id: (r.classification.value, r.blocking) for r in ev.tests}


@pytest.mark.parametrize("attack", sorted(ATTACKS) + sorted(HELD))
def test_code_cannot_hide_the_tests_it_breaks(repo: Path, sandbox_image: str, attack: str) -> None:
    ev = run(repo, attack, sandbox_image)
    got = rows(ev)
    hidden = HIGH_END[1:] if attack in HIDES_CLASS_ONLY else HIGH_END
    assert not ev.ok, ev.reason
    for test_id in hidden:
        assert got.get(test_id) == ("broken", True), (test_id, got.get(test_id), ev.reason)
    assert not [t for t, (cls, _) in got.items() if cls == "removed"], (got, ev.reason)
    assert got["tests/test_platform.py::test_elsewhere"] == ("skipped", False)
    assert ev.counts.still_passing >= 1, got  # the first module still ran on the head


def test_honest_changes_stay_fair(repo: Path, sandbox_image: str) -> None:
    refactor = run(repo, "refactor", sandbox_image)
    assert refactor.ok, refactor.reason
    assert rows(refactor)["tests/test_platform.py::test_elsewhere"] == ("skipped", False)

    edit = run(repo, "delete-and-rename", sandbox_image)
    got = rows(edit)
    assert edit.ok, (edit.reason, got)
    assert got["tests/test_contains.py::test_low_end"] == ("removed", False)
    assert got["tests/test_contains.py::test_inside"] == ("removed", False)
    assert got["tests/test_contains.py::test_inside_renamed"][1] is False
    assert got["tests/test_platform.py::test_elsewhere"] == ("skipped", False)
