"""Tests vs code, the trees each mode runs, and changes to the judge's machinery."""

from __future__ import annotations

from verifier.review.gitread import Entry, Files
from verifier.review.split import Splitter, base_mode_tests, compose, infrastructure_changes


def tree(**files: str) -> Files:
    return {k.replace("__", "/").replace("_DOT_", "."): Entry("100644", v.encode()) for k, v in files.items()}


def files(mapping: dict[str, str]) -> Files:
    return {k: Entry("100644", v.encode()) for k, v in mapping.items()}


def test_what_counts_as_tests() -> None:
    s = Splitter.for_trees(files({"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'}))
    tests = [
        "tests/helpers/data.json",
        "src/pkg/tests/test_x.py",
        "conftest.py",
        "src/pkg/conftest.py",
        "test_top.py",
        "pkg/thing_test.py",
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
    assert not any(s.is_test(p) for p in code), [p for p in code if s.is_test(p)]
    assert s.is_test_file("pkg/check_more.py") and not s.is_test_file("conftest.py")


def test_testpaths_make_a_folder_tests() -> None:
    s = Splitter.for_trees(files({"pytest.ini": "[pytest]\ntestpaths = spec\n"}))
    assert s.is_test("spec/helpers.py") and not s.is_test("specs/x.py")


def test_compose_takes_code_from_one_side_and_tests_from_the_other() -> None:
    base = files({"src/m.py": "old", "tests/test_m.py": "old test", "conftest.py": "old"})
    head = files({"src/m.py": "new", "tests/test_m.py": "new test", "tests/test_new.py": "t"})
    s = Splitter.for_trees(base, head)
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
    s = Splitter.for_trees(base, head)
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
    s = Splitter.for_trees(base)
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
