"""The built wheel works outside the checkout: a fresh venv holding only the wheel (and its
dependencies from the package index) runs `verifier --version`, `verifier image build` /
`image info` and one `verifier check` from a folder that is not the checkout.

The image is the one the checkout already built: the installed recipe has the same digest,
so `image build` finds it up to date (that equality is the point of shipping the recipe).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, ROOT
from verifier import __version__
from verifier._distribution import DISTRIBUTION
from verifier.sandbox.image import recipe_digest

#: One wheel and one venv (the module fixtures), so one worker runs the module.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("wheel")]

#: What a build needs; copying it keeps build/ and *.egg-info out of the checkout.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "verifier", "sandbox_images")


def sh(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(venv bin folder, a work folder outside the checkout, the environment to run in)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    built = sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", base / "dist", src, cwd=base)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (base / "dist").glob("*.whl")
    assert wheel.name.startswith(f"{DISTRIBUTION.replace('-', '_')}-{__version__}-")
    venv = base / "venv"
    made = sh(sys.executable, "-m", "venv", "--without-pip", venv, cwd=base)
    assert made.returncode == 0, made.stderr
    # The checkout's pip installs into the fresh venv; dependencies come from the index.
    got = sh(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet", wheel, cwd=base)
    assert got.returncode == 0, got.stderr[-3000:]
    work = base / "work"
    work.mkdir()
    shutil.copytree(EXAMPLE / "suite", work / "suite")
    shutil.copy2(EXAMPLE / "good.py", work / "good.py")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv / "bin", work, env


def test_the_installed_package_is_not_the_checkout(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    done = sh(bin_dir / "python", "-c", "import verifier; print(verifier.__file__)", cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert not Path(done.stdout.strip()).is_relative_to(ROOT)


def test_version(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    done = sh(bin_dir / "verifier", "--version", cwd=work, env=env)
    assert done.returncode == 0 and done.stdout.strip() == f"verifier {__version__}"


def test_image_build_and_info_use_the_shipped_recipe(
    installed: tuple[Path, Path, dict[str, str]], sandbox_image: str
) -> None:
    bin_dir, work, env = installed
    build = sh(bin_dir / "verifier", "image", "build", cwd=work, env=env)
    assert build.returncode == 0, build.stderr
    assert f"up to date: {sandbox_image}" in build.stdout  # same recipe digest as the checkout's
    info = sh(bin_dir / "verifier", "image", "info", "--json", cwd=work, env=env)
    assert info.returncode == 0, info.stderr
    described = json.loads(info.stdout)
    assert described["tag"] == sandbox_image and described["recipe_digest"] == recipe_digest()


def test_check_from_outside_the_checkout(installed: tuple[Path, Path, dict[str, str]], sandbox_image: str) -> None:
    bin_dir, work, env = installed
    done = sh(bin_dir / "verifier", "check", "good.py", "--suite", "suite", "--json", cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    evidence = json.loads(done.stdout)
    assert evidence["ok"] is True and evidence["status"] == "passed"
