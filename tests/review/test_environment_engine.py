"""Dependencies where projects keep them, and an environment that cannot collect the tests is not
the change's fault (issue 34, section 1). Real repositories, the real engine and package index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review.repos import add_branch, make_repo
from verifier.review import ReviewRequest, review
from verifier.review.deps import EnvironmentProblem
from verifier.review.reports import render

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: A setup.py-only project, as python-slugify is: its one dependency only in install_requires.
SETUP_PY = """\
from setuptools import setup

install_requires = ["more-itertools>=8"]

setup(name="chunky", version="1.0", packages=["chunky"], install_requires=install_requires)
"""
CHUNKY = """\
import more_itertools


def pairs(items):
    return [list(p) for p in more_itertools.chunked(items, 2)]
"""
TESTS = """\
import importlib.metadata

from chunky import pairs


def test_pairs():
    assert pairs([1, 2, 3]) == [[1, 2], [3]]


def test_installed_under_its_name():
    assert importlib.metadata.version("chunky") == "1.0"
"""


def test_a_setup_py_only_project_gets_its_dependencies(sandbox_image: str, tmp_path: Path) -> None:
    """Attack (issue 34): nothing was installed, both sides failed to import the package, and the
    review said "NOT OK the head run collected no tests" (exit 1), blaming the change."""
    repo = make_repo(tmp_path / "repo", {"setup.py": SETUP_PY, "chunky/__init__.py": CHUNKY, "tests/test_c.py": TESTS})
    add_branch(repo, "change", {"chunky/__init__.py": CHUNKY + "\n\nVERSION = 2\n"})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert ev.ok, ev.reason
    assert ev.counts.still_passing == 2
    assert "packages from `setup.py install_requires`" in render("markdown", ev)  # named in the comment
    for run in ev.runs:
        assert "more-itertools>=8" in run.environment.requirements
        assert "setup.py install_requires" in run.environment.sources
        assert any(p.lower().startswith("more_itertools==") for p in run.environment.packages), run.environment


def test_a_module_missing_on_both_sides_is_an_environment_problem(sandbox_image: str, tmp_path: Path) -> None:
    """A dependency declared nowhere the review reads: both sides fail to collect for the same
    reason. No verdict against the change: an environment problem naming the module and the remedy."""
    code = "import no_such_dependency_anywhere\n\n\ndef f():\n    return 1\n"
    repo = make_repo(tmp_path / "repo", {"lib.py": code, "tests/test_f.py": "from lib import f\n\n\ndef test_f():\n"
                                         "    assert f() == 1\n"})  # fmt: skip
    add_branch(repo, "change", {"lib.py": code.replace("return 1", "return 2")})
    with pytest.raises(EnvironmentProblem) as caught:
        review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert "no module named no_such_dependency_anywhere" in str(caught.value)
    assert "--requirements" in str(caught.value)


def test_a_module_the_change_removes_is_still_the_change_s_fault(sandbox_image: str, tmp_path: Path) -> None:
    """Fair the other way: a module the head cannot import but the base can is a verdict (broken)."""
    repo = make_repo(tmp_path / "repo", {"lib.py": "def f():\n    return 1\n", "tests/test_f.py":
                                         "from lib import f\n\n\ndef test_f():\n    assert f() == 1\n"})  # fmt: skip
    add_branch(repo, "change", {"lib.py": "import no_such_dependency_anywhere\n\n\ndef f():\n    return 1\n"})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert not ev.ok and ev.counts.broken == 1, ev.reason
