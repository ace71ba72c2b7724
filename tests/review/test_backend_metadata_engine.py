"""The project's own metadata from its build backend, as pip gets it, computed in a sandbox with
no network (issue 34 section 1): small real repositories whose dependencies and version only the
backend knows, the real engine and the machine's package index."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.review.repos import add_branch, make_repo
from verifier.review import ReviewRequest, review
from verifier.review.deps import DependencyError

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: setup.py computes its version (read from the package) and its dependencies (a file it reads),
#: and leaves a mark where it runs: on the host, that mark would appear in the host's /tmp.
SETUP_PY = """\
import os, re
from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "chunky", "__init__.py")) as f:
    version = re.search(r'__version__ = "(.+)"', f.read()).group(1)
with open(os.path.join(here, "deps.in")) as f:
    deps = [line.strip() for line in f if line.strip()]
try:
    open("HOST_MARK", "w").write("setup.py ran here")
except OSError:
    pass

setup(name="chunky", version=version, packages=["chunky"], install_requires=deps,
      extras_require={"test": [d.upper() for d in ["hypothesis"]]})
"""
CHUNKY = """\
import more_itertools

__version__ = "1.2.3"


def pairs(items):
    return [list(p) for p in more_itertools.chunked(items, 2)]
"""
TESTS = """\
import importlib.metadata

from chunky import pairs


def test_pairs():
    assert pairs([1, 2, 3]) == [[1, 2], [3]]


def test_installed_under_its_computed_version():
    assert importlib.metadata.version("chunky") == "1.2.3"
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "lumpy"
version = "2.0"
dynamic = ["dependencies"]

[tool.setuptools]
packages = ["lumpy"]

[tool.setuptools.dynamic]
dependencies = {file = ["deps.in"]}
"""
LUMPY = "import more_itertools\n\n\ndef first(items):\n    return more_itertools.first(items)\n"
LUMPY_TESTS = "from lumpy import first\n\n\ndef test_first():\n    assert first([3, 4]) == 3\n"


def test_dependencies_and_version_computed_in_setup_py(sandbox_image: str, tmp_path: Path) -> None:
    """Attack (issue 34): nothing declared where the files can be read (setup.py computes it), so
    nothing was installed and both sides failed to import: an environment problem, no review."""
    mark = f"/tmp/verifier-host-mark-{uuid.uuid4().hex}"
    files = {"setup.py": SETUP_PY.replace("HOST_MARK", mark), "deps.in": "more-itertools>=8\n",
             "chunky/__init__.py": CHUNKY, "tests/test_c.py": TESTS}  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    add_branch(repo, "change", {"chunky/__init__.py": CHUNKY + "\n\nEXTRA = 2\n"})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert ev.ok, ev.reason
    assert ev.counts.still_passing == 2
    for run in ev.runs:
        assert "more-itertools>=8" in run.environment.requirements, run.environment
        assert any(s.startswith("build backend setuptools.build_meta:__legacy__") for s in run.environment.sources)
        assert run.project.version == "1.2.3"
    assert not Path(mark).exists()  # the repository's code ran in the sandbox only


def test_dynamic_dependencies_in_pyproject(sandbox_image: str, tmp_path: Path) -> None:
    """`dynamic = ["dependencies"]`: the [project] table names none; setuptools reads them from a file."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "deps.in": "more-itertools>=8\n",
                                         "lumpy/__init__.py": LUMPY, "tests/test_l.py": LUMPY_TESTS})  # fmt: skip
    add_branch(repo, "change", {"lumpy/__init__.py": LUMPY + "\n\nX = 1\n"})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert ev.ok, ev.reason
    assert ev.counts.still_passing == 1
    for run in ev.runs:
        assert "more-itertools>=8" in run.environment.requirements
        assert any("prepare_metadata_for_build_wheel" in s for s in run.environment.sources), run.environment


def test_a_backend_that_fails_is_bad_input_naming_the_remedy(sandbox_image: str, tmp_path: Path) -> None:
    """A setup.py that raises while its dependencies are dynamic: no verdict on the change, an
    error naming the backend and --requirements (exit 2 through the CLI)."""
    broken = "from setuptools import setup\nraise RuntimeError('needs a network')\nsetup(install_requires=DEPS)\n"
    test = "from lib import X\n\n\ndef test_x():\n    assert X\n"
    repo = make_repo(tmp_path / "repo", {"setup.py": broken, "lib.py": "X = 1\n", "tests/test_x.py": test})
    add_branch(repo, "change", {"lib.py": "X = 2\n"})
    with pytest.raises(DependencyError) as caught:
        review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert "needs a network" in str(caught.value) and "--requirements" in str(caught.value)
