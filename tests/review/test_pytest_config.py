"""The review's idea of a test is pytest's: the splitter against pytest itself, and the config reader.

The differential tests write each tree to a folder and ask the real pytest (the version the
sandbox pins) what it collects, in the session the review runs (rootdir and working directory
the root, `Splitter.session_options`, the --test-paths), in this process (`--collect-only`,
no test body runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verifier.errors import InvalidInput
from verifier.review.gitread import MODE_FILE, Entry, Files, write_files
from verifier.review.provenance import ProvenanceIndex
from verifier.review.pytest_config import glob, locate
from verifier.review.split import Splitter

TEST = "def test_one():\n    pass\n"
UNITTEST = "import unittest\n\n\nclass Checks(unittest.TestCase):\n    def test_one(self):\n        pass\n"


def tree(mapping: dict[str, str]) -> Files:
    return {k: Entry(MODE_FILE, v.encode()) for k, v in mapping.items()}


class _Collected:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: list[Any] = []

    def pytest_collection_finish(self, session: Any) -> None:
        self.items = list(session.items)


def pytest_collects(files: Files, tmp_path: Path, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> Any:
    """What the real pytest collects from `files` in the review's session: its items."""
    root = tmp_path / "tree"
    root.mkdir()
    write_files(files, root)
    monkeypatch.chdir(root)
    grab = _Collected(root)
    pytest.main(
        [
            *("--collect-only", "-q", "--disable-plugin-autoload", "-p", "no:cacheprovider", "--import-mode=importlib"),
            *("--rootdir", str(root), *args),
        ],
        plugins=[grab],
    )
    return grab.items


def collected_files(items: Any, root: Path) -> set[str]:
    return {Path(i.path).relative_to(root).as_posix() for i in items}


# Each case: a tree (every .py file holds a test pytest would collect), and the --test-paths.
CASES: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "defaults, and folders pytest does not enter": (
        {
            "tests/test_a.py": TEST,
            "pkg/b_test.py": TEST,
            "pkg/core.py": TEST,
            "test.py": TEST,
            "build/test_built.py": TEST,
            ".hidden/test_h.py": TEST,
            "env1/pyvenv.cfg": "home = /usr\n",
            "env1/test_v.py": TEST,
            "node_modules/x/test_n.py": TEST,
        },
        (),
    ),
    "testpaths names a file": ({"pytest.ini": "[pytest]\ntestpaths = test.py\n", "test.py": TEST, "lib.py": ""}, ()),
    "testpaths with several python_files; a matching module outside them is code": (
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests", "src"]\n'
            'python_files = ["check_*.py", "*_spec.py"]\n',
            "tests/check_a.py": TEST,
            "tests/a_spec.py": TEST,
            "tests/test_default.py": TEST,
            "src/pkg/check_b.py": TEST,
            "other/check_c.py": TEST,
        },
        (),
    ),
    "tox.ini: testpaths globs, norecursedirs": (
        {
            "tox.ini": "[tox]\nenvlist = py\n\n[pytest]\ntestpaths = pkg*/tests\nnorecursedirs = legacy\n",
            "pkg1/tests/test_a.py": TEST,
            "pkg2/tests/test_b.py": TEST,
            "pkg2/tests/legacy/test_old.py": TEST,
            "tests/test_root.py": TEST,
        },
        (),
    ),
    "pytest.ini, even empty, wins over pyproject.toml": (
        {
            "pytest.ini": "",
            "pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n',
            "test_a.py": TEST,
            "check_b.py": TEST,
        },
        (),
    ),
    "setup.cfg [tool:pytest] when tox.ini has no [pytest]": (
        {
            "tox.ini": "[tox]\nenvlist = py\n",
            "setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\npython_files = *_check.py\n",
            "a_check.py": TEST,
            "test_a.py": TEST,
        },
        (),
    ),
    "pyproject.toml [tool.pytest], pytest 9's native TOML": (
        {"pyproject.toml": '[tool.pytest]\npython_files = ["t_*.py"]\n', "t_a.py": TEST, "test_b.py": TEST},
        (),
    ),
    "addopts paths are the session's paths": (
        {
            "pytest.ini": "[pytest]\naddopts = -ra --strict-markers tests/unit\ntestpaths = tests\n",
            "tests/unit/test_a.py": TEST,
            "tests/other/test_b.py": TEST,
        },
        (),
    ),
    "--test-path: a unittest test.py, no configuration": (
        {"test.py": UNITTEST, "mylib.py": "", "tests/test_x.py": TEST},
        ("test.py",),
    ),
    "--test-path starts pytest's search for its configuration there": (
        {
            "pytest.ini": "[pytest]\npython_files = root_*.py\n",
            "sub/tests/pytest.ini": "[pytest]\npython_files = x_*.py\n",
            "sub/tests/x_a.py": TEST,
            "sub/tests/root_b.py": TEST,
        },
        ("sub/tests",),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_splitter_collects_what_pytest_collects(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mapping, test_paths = CASES[case]
    files = tree(mapping)
    s = Splitter.for_tree(files, test_paths)
    args = (*s.session_options(), *test_paths)
    got = collected_files(pytest_collects(files, tmp_path, args, monkeypatch), tmp_path / "tree")
    ours = {p for p in files if p.endswith(".py") and s.is_test_file(p)}
    assert ours == got and got, case


def test_test_names_are_pytest_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """python_classes / python_functions (prefixes and globs) and unittest's TestCases, as pytest collects
    them: the review finds every test pytest collects by name; it also takes pytest's default names
    (a change that renames the patterns must not hide a test from the finder of edited and removed tests)."""
    source = """
import unittest

def check_a(): pass
def test_default(): pass
def verify_b(): pass
def helper(): pass

class SuiteOne:
    def check_c(self): pass
    def helper(self): pass
    class SuiteInner:
        def check_d(self): pass

class Other:
    def check_e(self): pass

class Whatever(unittest.TestCase):
    def test_f(self): pass
"""
    files = tree(
        {
            "pytest.ini": "[pytest]\npython_functions = check_ verify_*\npython_classes = Suite*\n",
            "test_m.py": source,
        }
    )
    s = Splitter.for_tree(files)
    items = pytest_collects(files, tmp_path, s.session_options(), monkeypatch)
    got = {i.nodeid.split("::", 1)[1].replace("::", ".") for i in items}
    module = ProvenanceIndex(files, files, s).module("head", "test_m.py")
    assert module is not None
    ours = {q for q, _ in module.tests}
    assert got <= ours and ours - got == {"test_default"}
    assert {"Whatever.test_f", "SuiteOne.SuiteInner.check_d", "verify_b"} <= got


def test_a_configuration_pytest_cannot_read_is_recorded_as_its_problem() -> None:
    broken = locate(tree({"setup.cfg": "[pytest]\npython_files = x\n"}))
    assert broken.inifile == "setup.cfg" and "[tool:pytest]" in broken.problem
    dup = locate(tree({"tox.ini": "[pytest]\npython_files = a\npython_files = b\n"}))
    assert dup.inifile == "tox.ini" and dup.problem
    both = locate(tree({"pyproject.toml": "[tool.pytest]\nx = 1\n[tool.pytest.ini_options]\ny = '2'\n"}))
    assert both.problem
    # pytest refuses to start on it: the session is pinned to that file, and the run says why.
    assert Splitter.for_tree(tree({"tox.ini": "[pytest]\na = 1\na = 2\n"})).session_options()[:2] == ("-c", "tox.ini")


def test_only_a_pyproject_without_pytest_section_is_the_file_pytest_names() -> None:
    found = locate(tree({"pyproject.toml": "[project]\nname = 'x'\n", "tox.ini": "[tox]\n"}))
    assert found.inifile == "pyproject.toml" and dict(found.options) == {}
    assert locate(tree({"README": ""})).inifile is None


def test_glob_is_python_s_recursive_glob_on_the_tree() -> None:
    paths = {"a", "a/b", "a/b/c.py", "a/.h", "a/.h/d.py", "x.py", "tests", "tests/t.py"}
    assert glob("a/**/*.py", paths) == ["a/b/c.py"]
    assert glob("**/t.py", paths) == ["tests/t.py"]
    assert glob("./tests/", paths) == ["tests"]
    assert glob("x.py/", paths) == []
    assert glob("../x.py", paths) == [] and glob("/x.py", paths) == []


@pytest.mark.parametrize("bad", ["../outside", "/etc", "-k", "no/such/path"])
def test_a_test_path_outside_the_tree_is_refused(bad: str) -> None:
    with pytest.raises(InvalidInput, match="--test-path"):
        Splitter.for_tree(tree({"test.py": TEST}), [bad])
