"""Tests vs code, the trees each mode runs, and changes to the judge's machinery."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review.repos import make_repo
from verifier.errors import InvalidInput
from verifier.review.gitread import Entry, Files
from verifier.review.provenance import ProvenanceIndex
from verifier.review.service import ReviewRequest, plan_trees, read_trees
from verifier.review.split import Splitter, TestsMode, base_mode_tests, compose, infrastructure_changes


def tree(**files: str) -> Files:
    return {k.replace("__", "/").replace("_DOT_", "."): Entry("100644", v.encode()) for k, v in files.items()}


def files(mapping: dict[str, str]) -> Files:
    return {k: Entry("100644", v.encode()) for k, v in mapping.items()}


def test_what_counts_as_tests() -> None:
    s = Splitter.for_tree(files({"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'}))
    tests = [
        "tests/helpers/data.json",
        "src/pkg/tests/test_x.py",
        "conftest.py",
        "src/pkg/conftest.py",
        "pkg/check_more.py",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
        "pytest.ini",
    ]
    code = [
        "src/pkg/core.py",
        "setup.py",
        "requirements.txt",
        "docs/conf.py",
        "sub/pyproject.toml",
        "pkg/testing_utils.py",
    ]
    assert all(s.is_test(p) for p in tests), [p for p in tests if not s.is_test(p)]
    # The configured python_files replace pytest's defaults, as in pytest.
    assert not s.is_test("pkg/thing_test.py") and not s.is_test("test_top.py")
    assert not any(s.is_test(p) for p in code), [p for p in code if s.is_test(p)]
    assert s.is_test_file("pkg/check_more.py") and not s.is_test_file("conftest.py")


def test_testpaths_are_where_pytest_looks_for_test_modules() -> None:
    tree = files({"pytest.ini": "[pytest]\ntestpaths = spec\n", "spec/test_x.py": "", "spec/helpers.py": ""})
    s = Splitter.for_tree(tree)
    assert s.is_test_file("spec/test_x.py") and not s.is_test("specs/x.py")
    # A testpaths folder does not make its other files tests (testpaths = src holds the code):
    # only --test-path, a folder the user names as tests, does.
    assert not s.is_test("spec/helpers.py")
    assert Splitter.for_tree(tree, ["spec"]).is_test("spec/helpers.py")


def test_compose_takes_code_from_one_side_and_tests_from_the_other() -> None:
    base = files({"src/m.py": "old", "tests/test_m.py": "old test", "conftest.py": "old"})
    head = files({"src/m.py": "new", "tests/test_m.py": "new test", "tests/test_new.py": "t"})
    s = Splitter.for_tree(head, also=base)
    run = compose(base, head, s)
    assert {p: e.data for p, e in run.items()} == {
        "src/m.py": b"old",
        "tests/test_m.py": b"new test",
        "tests/test_new.py": b"t",
    }


def test_base_mode_keeps_the_base_tests_and_only_adds_new_files_that_cannot_reach_them() -> None:
    base = files({"src/m.py": "", "tests/test_m.py": "base", "tests/conftest.py": "base", "pyproject.toml": "base"})
    head = files(
        {
            "src/m.py": "",
            "tests/test_m.py": "edited",
            "tests/conftest.py": "edited",
            "tests/test_new.py": "new",
            "tests/extra/conftest.py": "new folder: only reaches new tests",
            "tests/extra/test_more.py": "new",
            "conftest.py": "new root conftest: would reach every base test",
            "pytest.ini": "[pytest]\naddopts = -k 'not test_m'\n",
            "pyproject.toml": "head",
        }
    )
    s = Splitter.for_tree(head, also=base)
    tests = base_mode_tests(base, head, s)
    assert {p: e.data.decode() for p, e in tests.items()} == {
        "tests/test_m.py": "base",
        "tests/conftest.py": "base",
        "pyproject.toml": "base",
        "tests/test_new.py": "new",
        "tests/extra/conftest.py": "new folder: only reaches new tests",
        "tests/extra/test_more.py": "new",
    }


def test_infrastructure_changes_name_the_judge_s_machinery_only() -> None:
    base = files(
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = []\n[tool.pytest.ini_options]\naddopts = "-q"\n',
            "tests/conftest.py": "A",
            "tests/test_a.py": "t",
            "tests/helpers.py": "h",
        }
    )
    deps_only = dict(base)
    deps_only["pyproject.toml"] = Entry(
        "100644", b'[project]\nname = "x"\ndependencies = ["attrs"]\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    )
    s = Splitter.for_tree(base)
    assert infrastructure_changes(base, deps_only, s) == []
    rigged = dict(base)
    rigged["pyproject.toml"] = Entry("100644", b'[tool.pytest.ini_options]\naddopts = "-q -k not_a"\n')
    rigged["tests/conftest.py"] = Entry("100644", b"B")
    rigged["tests/test_a.py"] = Entry("100644", b"edited test module: provenance, not infrastructure")
    del rigged["tests/helpers.py"]
    assert infrastructure_changes(base, rigged, s) == [
        "pyproject.toml (its pytest configuration)",
        "tests/conftest.py (edited)",
        "tests/helpers.py (removed)",
    ]


# ---------------------------------------------------------------- real repositories, through git


def planned(root: Path, mode: TestsMode = "head", test_paths: tuple[str, ...] = ()) -> tuple[Splitter, Files, Files]:
    trees = read_trees(ReviewRequest(repo=root, base="main", head="change"))
    return plan_trees(trees, mode, test_paths)


UNITTEST_TEST_PY = """import unittest

from mylib import f


class Tests(unittest.TestCase):
    def test_f(self):
        self.assertEqual(f(), 1)
"""


def test_a_testpaths_file_is_tests(tmp_path: Path) -> None:
    """Attacks: `testpaths = ["test.py"]` refused as "no tests" although pytest runs it."""
    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["test.py"]\n',
        "mylib.py": "def f():\n    return 1\n",
    }
    root = make_repo(tmp_path / "r", files | {"test.py": UNITTEST_TEST_PY}, {"mylib.py": "def f():\n    return 2\n"})
    s, base_run, _ = planned(root)
    assert s.is_test_file("test.py") and s.roots == ("test.py",)
    assert base_run["mylib.py"].data == b"def f():\n    return 1\n"  # the base run has the base's code


def test_a_unittest_test_py_is_named_with_test_path(tmp_path: Path) -> None:
    """Attacks: tests in a test.py run by unittest, no pytest configuration: no way to say so."""
    root = make_repo(
        tmp_path / "r", {"mylib.py": "def f():\n    return 1\n", "test.py": UNITTEST_TEST_PY}, {"README": "x"}
    )
    with pytest.raises(InvalidInput, match=r"no tests.*--test-path"):
        planned(root)
    s, _, head_run = planned(root, test_paths=("test.py",))
    assert s.is_test("test.py") and not s.is_test("mylib.py") and s.claimed == ("test.py",)
    module = ProvenanceIndex(head_run, head_run, s).module("head", "test.py")
    assert module is not None and module.tests == [("Tests.test_f", 7)]


def test_testpaths_that_hold_the_code_do_not_give_the_base_run_the_head_s_code(tmp_path: Path) -> None:
    """Attacks: `testpaths = src tests` (doctests) made src/ the tests' side: the base run ran the
    head's code, and a regression in it was compared with itself."""
    cfg = "[pytest]\ntestpaths = src tests\naddopts = --doctest-modules\n"
    base = {
        "pytest.ini": cfg,
        "src/pkg/core.py": "def f():\n    return 1\n",
        "tests/test_core.py": "def test_f(): pass\n",
    }
    root = make_repo(tmp_path / "r", base, {"src/pkg/core.py": "def f():\n    return 2\n"})
    s, base_run, head_run = planned(root)
    assert not s.is_test("src/pkg/core.py")
    assert base_run["src/pkg/core.py"].data != head_run["src/pkg/core.py"].data


def test_a_module_named_like_a_test_outside_the_test_paths_is_code(tmp_path: Path) -> None:
    """Attacks: any `test_*.py` anywhere was the tests': a shipped `pkg/test_utils.py` the change
    breaks went to the base run from the head, hiding the break."""
    cfg = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    base = {"pyproject.toml": cfg, "pkg/test_utils.py": "X = 1\n", "tests/test_pkg.py": "def test_x(): pass\n"}
    root = make_repo(tmp_path / "r", base, {"pkg/test_utils.py": "X = 2\n"})
    s, base_run, _ = planned(root)
    assert not s.is_test("pkg/test_utils.py") and base_run["pkg/test_utils.py"].data == b"X = 1\n"


def test_a_change_cannot_move_code_to_the_tests_side_by_editing_the_configuration(tmp_path: Path) -> None:
    """Attacks: the head sets `python_files = *.py`: every module would be the tests', and the base
    run would get the head's (broken) code."""
    base = {"pkg/core.py": "def f():\n    return 1\n", "tests/test_core.py": "def test_f(): pass\n"}
    head = {"pkg/core.py": "def f():\n    return 2\n", "pytest.ini": "[pytest]\npython_files = *.py\n"}
    root = make_repo(tmp_path / "r", base, head)
    s, base_run, _ = planned(root)
    assert s.config.inifile == "pytest.ini" and s.is_test_file("pkg/core.py")  # pytest collects it...
    assert base_run["pkg/core.py"].data == b"def f():\n    return 1\n"  # ...but the base run has the base's code


def test_the_tests_side_s_configuration_decides(tmp_path: Path) -> None:
    """Attacks: both trees' python_files were merged; pytest reads one file, the tests side's."""
    base = {"pytest.ini": "[pytest]\npython_files = check_*.py\n", "check_a.py": "", "test_b.py": ""}
    root = make_repo(tmp_path / "r", base, {"pytest.ini": "[pytest]\n"})
    assert planned(root, "head")[0].python_files == ("test_*.py", "*_test.py")
    assert planned(root, "base")[0].python_files == ("check_*.py",)
