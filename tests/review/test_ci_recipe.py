"""The CI recipe (examples/review/github-workflow.yml) works as written: its install step, run
from a local copy of this checkout, and the commands of its later steps exist."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.review.repos import git
from verifier import __version__
from verifier._distribution import DISTRIBUTION

WORKFLOW = ROOT / "examples" / "review" / "github-workflow.yml"
#: What a build needs (as tests/packaging copies it): build/ and *.egg-info stay out of the checkout.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "verifier", "sandbox_images")


def install_command() -> list[str]:
    """The recipe's `pip install ...` line, as the runner's shell would split it."""
    lines = [ln for ln in WORKFLOW.read_text().splitlines() if re.match(r"\s*pip install ", ln)]
    assert len(lines) == 1, lines
    return shlex.split(lines[0], comments=True)


def test_the_recipe_installs_the_distribution_by_its_name() -> None:
    """Attacks: the recipe installed "verifier @ git+...", a name pip refuses for this distribution."""
    command = install_command()
    requirement = command[-1]
    name, at, url = requirement.partition(" @ ")
    assert at and name == DISTRIBUTION and url.startswith("git+https://"), requirement


@pytest.mark.slow
def test_the_recipe_s_install_step_works_from_a_local_copy(tmp_path: Path) -> None:
    """The install step as written, with the repository's URL replaced by a git clone of a local
    copy: pip checks the name against the built metadata (dependencies are not the point: --no-deps)."""
    src = tmp_path / "verifier"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "copy")
    command = install_command()
    name = command[-1].partition(" @ ")[0]
    # A host in the URL ("localhost"): the pip a fresh venv has (23.2, packaging 21.3) refuses a
    # direct reference whose URL has no host, as "git+file:///..." has none; git+https:// has one.
    command[-1] = f"{name} @ git+file://localhost{src}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    assert command[:2] == ["pip", "install"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *command[1:], "--no-deps", "-q"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert shown.stdout.strip() == __version__, shown.stderr


def test_the_recipe_s_verifier_commands_exist() -> None:
    """Every `verifier ...` command the recipe runs parses (its --help works), with the options it gives."""
    text = WORKFLOW.read_text()
    assert "verifier image build --base registry" in text
    for args in (["image", "build", "--help"], ["review", "--help"]):
        done = subprocess.run([sys.executable, "-m", "verifier", *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    helptext = subprocess.run(
        [sys.executable, "-m", "verifier", "review", "--help"], capture_output=True, text=True, timeout=120
    ).stdout
    for option in re.findall(r"(--[a-z-]+)", text[text.index("verifier review .") :].split("echo")[0]):
        assert option in helptext, option
