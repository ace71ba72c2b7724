"""Declared dependencies (only index names; everything else refused, named) and the project itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.review.deps import DependencyError, declared, from_file, project_info
from verifier.review.gitread import Entry, Files
from verifier.sandbox.environment import sandbox_pins

PYPROJECT = """
[project]
name = "My.Lib"
version = "1.2"
dependencies = ["attrs>=22", "tomli; python_version < '3.11'"]

[project.optional-dependencies]
test = ["pytest>=8", "my-lib[extra]"]
extra = ["more-itertools"]
docs = ["sphinx"]

[dependency-groups]
dev = ["ruff", {include-group = "lint"}]
lint = ["mypy"]

[project.scripts]
mylib = "my_lib.cli:main"

[project.entry-points.pytest11]
mylib = "my_lib.plugin"
"""


def files(mapping: dict[str, str]) -> Files:
    return {k: Entry("100644", v.encode()) for k, v in mapping.items()}


def test_pyproject_runtime_and_test_dependencies() -> None:
    tree = files({"pyproject.toml": PYPROJECT, "src/my_lib/__init__.py": ""})
    runtime = declared(tree, runtime=True, tests=False)
    assert runtime.requirements == ("attrs>=22", "tomli; python_version < '3.11'")
    tests = declared(tree, runtime=False, tests=True)
    # The self-reference my-lib[extra] expands to the extra; groups include their groups; docs is not a test extra.
    assert tests.requirements == ("more-itertools", "mypy", "pytest>=8", "ruff")
    info = project_info(tree)
    assert (info.name, info.version, info.import_roots) == ("My.Lib", "1.2", ("src", ""))
    assert info.entry_points == {
        "console_scripts": {"mylib": "my_lib.cli:main"},
        "pytest11": {"mylib": "my_lib.plugin"},
    }


def test_requirements_files_with_includes_comments_hashes_and_the_project_itself() -> None:
    tree = files(
        {
            "requirements.txt": "requests==2.31.0  # pinned\n",
            "requirements-dev.txt": "-r requirements.txt\n-e .\nhypothesis \\\n  >=6 --hash=sha256:abc\n\n# c\n",
            "setup.cfg": "[metadata]\nname = legacy\nversion = attr: legacy.__version__\n",
        }
    )
    assert declared(tree, runtime=True, tests=False).requirements == ("requests==2.31.0",)
    assert declared(tree, runtime=False, tests=True).requirements == ("hypothesis >=6", "requests==2.31.0")
    assert project_info(tree).name == "legacy" and project_info(tree).version is None


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("pkg @ https://example.invalid/pkg.whl", "direct reference"),
        ("git+https://example.invalid/x.git", "direct reference"),
        ("./vendor/pkg", "direct reference"),
        ("--index-url https://example.invalid/simple", "pip option '--index-url'"),
        ("--extra-index-url=https://example.invalid/", "pip option"),
        ("pkg; os.system('x')", "not a requirement"),  # read as PEP 508 (packaging): no such marker
        ("pkg; python_version >= '3'", None),  # a valid marker: kept for pip, never evaluated here
        ("pkg$(whoami)", "not a requirement"),
    ],
)
def test_refused_requirements_are_named(line: str, words: str | None) -> None:
    tree = files({"requirements.txt": line + "\n"})
    if words is None:
        assert declared(tree, runtime=True, tests=False).requirements == (line,)
        return
    with pytest.raises(DependencyError, match=words) as info:
        declared(tree, runtime=True, tests=False)
    assert "requirements.txt:1" in str(info.value)


def test_requirements_override_file_and_its_includes(tmp_path: Path) -> None:
    (tmp_path / "base.txt").write_text("attrs\n")
    (tmp_path / "ci.txt").write_text("-r base.txt\npytest>=8\n")
    assert from_file(tmp_path / "ci.txt").requirements == ("attrs", "pytest>=8")
    with pytest.raises(DependencyError, match="does not exist"):
        from_file(tmp_path / "missing.txt")


SETUP_PY = """
from setuptools import find_packages, setup

install_requires = ["text-unidecode>=1.3"]

setup(
    name="python-slugish",
    version="8.0.1",
    packages=find_packages(),
    install_requires=install_requires,
    tests_require=["pytest-mock"],
    extras_require={"unidecode": ["Unidecode>=1.1.1"], "test": ["hypothesis"]},
)
"""


def test_setup_py_is_read_never_run() -> None:
    """Issue 34: a setup.py-only project (install_requires) got nothing installed. Its literal
    keywords (a module-level name followed once) are read from its syntax tree."""
    tree = files({"setup.py": SETUP_PY + "\nraise SystemExit('never run')\n", "slugish/__init__.py": ""})
    runtime = declared(tree, runtime=True, tests=False)
    assert runtime.requirements == ("text-unidecode>=1.3",)
    assert runtime.sources == ("setup.py install_requires",)
    tests = declared(tree, runtime=False, tests=True)
    assert tests.requirements == ("hypothesis", "pytest-mock")
    assert tests.sources == ("setup.py extras_require test", "setup.py tests_require")
    info = project_info(tree)
    assert (info.name, info.version) == ("python-slugish", "8.0.1")


def test_setup_cfg_requirements_files_and_tox_ini() -> None:
    tree = files(
        {
            "setup.cfg": "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    attrs>=22\n    idna\n\n"
            "[options.extras_require]\ntesting =\n    pytest-mock\ndocs =\n    sphinx\n",
            "test-requirements.txt": "freezegun\n",
            "requirements/tests.txt": "-r base.txt\nresponses\n",
            "requirements/base.txt": "six\n",
            "requirements/docs.txt": "sphinx\n",
            "docs/requirements.txt": "furo\n",
            "tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps =\n    -r{toxinidir}/requirements/base.txt\n"
            "    pytest-timeout\n    django32: Django>=3.2,<4\n    {env:EXTRA:}\n    -e .\n",
        }
    )
    runtime = declared(tree, runtime=True, tests=False)
    assert runtime.requirements == ("attrs>=22", "idna", "six")
    assert runtime.sources == ("requirements/base.txt", "setup.cfg [options] install_requires")
    tests = declared(tree, runtime=False, tests=True)
    assert tests.requirements == ("freezegun", "pytest-mock", "pytest-timeout", "responses", "six")
    assert tests.sources == (
        "requirements/tests.txt",
        "setup.cfg [options.extras_require] testing",
        "test-requirements.txt",
        "tox.ini [testenv] deps",
    )


def test_tox_names_the_tests_requirements_file_and_python_variants_pick_the_sandbox_one() -> None:
    # wcwidth's shape (jquast/wcwidth 4c91403): requirements-tests38.txt and -tests39.txt pin two
    # versions of coverage, and tox.ini's [testenv] deps names the one its tests use. Read
    # together, they could not be installed (an environment error blamed on nobody's change).
    variants = {
        "requirements-tests38.txt": "coverage==7.6.1\nfreezegun==1.4.0\n",
        "requirements-tests39.txt": "coverage==7.10.7\nfreezegun==1.5.1\n",
        "requirements-develop.txt": "coverage==7.9.0\ntox\n",
        "requirements-tests38.in": "coverage[toml]<=7.6.1\n",
    }
    tox = "[tox]\nenvlist = py{38,39,311}\n\n[testenv]\ndeps = -r requirements-tests39.txt\n"
    tests = declared(files({**variants, "tox.ini": tox}), runtime=False, tests=True)
    assert tests.requirements == ("coverage==7.10.7", "freezegun==1.5.1")
    assert tests.sources == ("tox.ini [testenv] deps",)
    # Without tox.ini: of the files for several Pythons, the newest not newer than the sandbox's 3.11.
    more = {**variants, "requirements-tests312.txt": "coverage==8.0\n", "requirements-tests3.10.txt": "coverage==7.8\n"}
    tests = declared(files(more), runtime=False, tests=True)
    assert tests.requirements == ("coverage==7.8", "coverage==7.9.0", "tox")
    assert tests.sources == ("requirements-develop.txt", "requirements-tests3.10.txt")
    # Only files for newer Pythons: the oldest of them.
    tests = declared(
        files({"requirements-py312.txt": "a\n", "requirements-py313.txt": "b\n"}), runtime=True, tests=False
    )
    assert tests.requirements == ("a",)


def test_pins_on_the_test_runner_s_own_packages_give_way_to_the_sandbox_s() -> None:
    # wcwidth's requirements-tests39.txt pins iniconfig==2.1.0 and pytest==8.4.2: beside the
    # sandbox's pytest they could not be installed (an environment error for every review).
    pins = dict(pin.split("==") for pin in sandbox_pins())
    tree = files({"requirements-tests.txt": "pytest==8.4.2\niniconfig==2.1.0\npytest-cov==6.0\nhypothesis>=6\n"})
    tests = declared(tree, runtime=False, tests=True)
    assert tests.requirements == ("hypothesis>=6", "pytest-cov==6.0")  # hypothesis>=6 admits the pin: kept
    assert tests.sources == (
        "requirements-tests.txt",
        f"the sandbox's own iniconfig=={pins['iniconfig']}, pytest=={pins['pytest']} "
        "(the test runner's: the project's pins set aside)",
    )


def test_a_dev_file_includes_by_relative_paths_and_its_docs_include_is_left_out() -> None:
    # more-itertools' shape (958990e): requirements/development.txt includes testing.txt,
    # typechecks.txt and ../docs/requirements.txt (read as requirements/../docs/..., not in the tree).
    tree = files(
        {
            "requirements/development.txt": "--requirement testing.txt\n--requirement typechecks.txt\n"
            "--requirement ../docs/requirements.txt\n-r ./sub/../extra-test.txt\n",
            "requirements/testing.txt": "coverage\n",
            "requirements/typechecks.txt": "mypy\n",
            "requirements/extra-test.txt": "hypothesis\n",
            "docs/requirements.txt": "Sphinx\n",
        }
    )
    tests = declared(tree, runtime=False, tests=True)
    assert tests.requirements == ("coverage", "hypothesis")
    assert tests.sources == ("requirements/development.txt", "requirements/extra-test.txt", "requirements/testing.txt")
    outside = files({"requirements/dev.txt": "-r ../../secret.txt\n"})
    with pytest.raises(DependencyError, match="outside the tree"):
        declared(outside, runtime=False, tests=True)


def test_requirements_in_a_root_test_folder_are_the_tests() -> None:
    # tomli's shape (hukkin/tomli 9e56735): its test dependencies only in tests/requirements.txt
    # (named by a tox section inside pyproject.toml), nothing in [project] for the tests.
    tree = files(
        {
            "pyproject.toml": '[project]\nname = "tomli"\nversion = "1.2.2"\n',
            "tests/requirements.txt": "pytest\npython-dateutil\n",
            "testing/dev-requirements.txt": "freezegun\n",
            "tests/data/valid/requirements.txt": "not-a-requirement-file\n",
            "docs/tests/requirements.txt": "furo\n",
        }
    )
    assert declared(tree, runtime=True, tests=False).requirements == ()
    tests = declared(tree, runtime=False, tests=True)
    assert tests.requirements == ("freezegun", "pytest", "python-dateutil")
    assert tests.sources == ("testing/dev-requirements.txt", "tests/requirements.txt")
