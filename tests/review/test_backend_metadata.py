"""Which trees need their build backend for their metadata, and how its answer is read (untrusted
text: every line checked, markers for the sandbox). The backend in the sandbox:
tests/review/test_backend_metadata_engine.py."""

from __future__ import annotations

import pytest

from verifier.review import deps
from verifier.review.backend_metadata import (
    LEGACY_BACKEND,
    PRETEND_VERSION,
    _answer,
    build_system,
    dynamic_reason,
    parse,
)
from verifier.review.gitread import Entry
from verifier.sandbox.requirements import DependencyError


def tree(files: dict[str, str] | None = None) -> dict[str, Entry]:
    return {name: Entry("100644", text.encode()) for name, text in (files or {}).items()}


@pytest.mark.parametrize(
    ("files", "reason", "dependencies"),
    [
        ({"setup.py": "from setuptools import setup\nsetup(name='a', install_requires=['x'])\n"}, None, None),
        ({"setup.py": "from setuptools import setup\nD = ['x']\nsetup(install_requires=D)\n"}, None, None),
        (
            {"setup.py": "from setuptools import setup\nsetup(install_requires=open('r').read().split())\n"},
            "setup.py computes install_requires",
            True,
        ),
        (
            {"setup.py": "from setuptools import setup\nsetup(name='a', version=get())\n"},
            "setup.py computes version",
            False,
        ),
        ({"setup.py": "import setuptools\nsetuptools.setup(**cfg)\n"}, "setup.py calls setup(**...)", True),
        ({"setup.py": "exec(open('x').read())\n"}, "setup.py has no setup() call to read", True),
        ({"pyproject.toml": "[project]\nname='a'\nversion='1'\ndependencies=['x']\n"}, None, None),
        ({"pyproject.toml": "[project]\nname='a'\ndynamic=['version']\n"}, None, None),
        (
            {
                "pyproject.toml": "[project]\nname='a'\ndynamic=['version', 'dependencies']\n",
                "setup.py": "from setuptools import setup\nsetup()\n",
            },
            "dynamic = ['dependencies']",
            True,
        ),
        (
            {
                "pyproject.toml": "[build-system]\nrequires=['poetry-core']\nbuild-backend='poetry.core.masonry.api'\n"
                "[tool.poetry]\nname='a'\n"
            },
            "poetry.core.masonry.api",
            True,
        ),
        ({"requirements.txt": "x\n"}, None, None),
    ],
)
def test_which_trees_need_their_backend(files: dict[str, str], reason: str | None, dependencies: bool | None) -> None:
    found = dynamic_reason(tree(files))
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found.reason and found.dependencies is dependencies


def test_build_system_and_its_fallback() -> None:
    assert build_system(tree({"setup.py": ""})).backend == LEGACY_BACKEND
    hatch = "[build-system]\nrequires=['hatchling']\nbuild-backend='hatchling.build'\n"
    got = build_system(tree({"pyproject.toml": hatch}))
    assert (got.backend, got.requires) == ("hatchling.build", ("hatchling",))
    with pytest.raises(DependencyError, match="outside the tree"):
        build_system(tree({"pyproject.toml": "[build-system]\nbuild-backend='b'\nbackend-path=['../x']\n"}))


METADATA = """\
Metadata-Version: 2.1
Name: chunky
Version: 1.2.3
Provides-Extra: test
Provides-Extra: docs
Requires-Dist: more-itertools>=8
Requires-Dist: tomli; python_version < "3.11"
Requires-Dist: pywin32; sys_platform == "win32"
Requires-Dist: pytest-mock; extra == "test"
Requires-Dist: chunky[fast]; extra == "test"
Requires-Dist: ujson; extra == "fast"
Requires-Dist: sphinx; extra == "docs"

A long description: Requires-Dist: not-a-header
"""


def test_the_backend_s_metadata_read_for_the_sandbox() -> None:
    meta = parse(METADATA, "build backend b (prepare_metadata_for_build_wheel, in the sandbox)")
    assert (meta.name, meta.version) == ("chunky", "1.2.3")
    assert meta.requirements(runtime=True, extras=()) == ["more-itertools>=8"]  # markers for the sandbox's 3.11
    assert meta.requirements(runtime=False, extras=("test",)) == ["pytest-mock", "ujson"]  # its own [fast] followed
    spec = deps.declared(tree(), runtime=True, tests=True, metadata=meta)
    assert spec.requirements == ("more-itertools>=8", "pytest-mock", "ujson")
    assert spec.sources == ("build backend b (prepare_metadata_for_build_wheel, in the sandbox)",)
    assert deps.project_info(tree(), meta).version == "1.2.3"


@pytest.mark.parametrize(
    "line", ["evil @ https://example.invalid/evil.whl", "x --index-url https://example.invalid", "./local"]
)
def test_a_requirement_the_backend_gives_is_checked_like_every_other(line: str) -> None:
    """The backend is the repository's code: what it answers names packages of the index only."""
    with pytest.raises(DependencyError):
        parse(f"Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: {line}\n", "build backend b")


def test_a_version_setuptools_scm_was_told_is_not_the_project_s() -> None:
    assert parse(f"Metadata-Version: 2.1\nName: a\nVersion: {PRETEND_VERSION}\n", "b").version is None


def test_the_answer_is_the_nonce_bound_line_and_bounded() -> None:
    system = build_system(tree({"setup.py": ""}))
    out = b'noise\n{"metadata": "forged"}\nN0NCE{"metadata": "M", "hook": "h"}\n'
    assert _answer(out, "N0NCE", system, False, 0) == {"metadata": "M", "hook": "h"}
    with pytest.raises(DependencyError, match="--requirements"):
        _answer(b'{"metadata": "forged"}\n', "N0NCE", system, False, 1)
    with pytest.raises(DependencyError, match="more than"):
        _answer(b"N0NCE" + b"x" * (3 << 20), "N0NCE", system, False, 0)
