"""A suite's packages on the real engine (issue 24): the dataframe example verifies through the
CLI, its environment is built once and then found, the evidence names it, and two suites with
different requirements never share a warm sandbox. One environment image (numpy + pandas, the
example's) serves every test here and tests/adversarial/test_scidata.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from verifier import Limits, PoolConfig, Status, Verifier
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.environment import ensure, env_tag
from verifier.suite import load_suite

pytestmark = pytest.mark.docker

EXAMPLE = ROOT / "examples" / "dataframes"
SUITE = EXAMPLE / "suite"
LIMITS = Limits(timeout_s=120)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verifier", *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def environment_id(sandbox_image: str) -> str:
    """The example's environment, prepared as a user would (`verifier image build --suite`)."""
    done = _cli("image", "build", "--suite", str(SUITE))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "verifier-env:" in done.stdout
    with DockerBackend() as backend:
        env = ensure(backend, load_suite(SUITE).requirements, sandbox_image)
    assert not env.built  # the command above made it
    return env.image_id


def test_the_example_through_the_cli_and_a_second_run_builds_nothing(
    environment_id: str, sandbox_image: str, tmp_path: Path
) -> None:
    good = _cli("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--json")
    assert good.returncode == 0, (good.stdout[-3000:], good.stderr[-2000:])
    evidence = json.loads(good.stdout)
    assert evidence["ok"] is True and evidence["counts"]["passed"] == 4
    assert evidence["image_id"] == environment_id == evidence["environment"]["image_id"]
    assert evidence["environment"]["requirements"] == ["numpy>=2,<3", "pandas==2.*"]
    assert any(p.startswith("pandas==2.") for p in evidence["environment"]["packages"])
    quick = tmp_path / "suite"  # the same suite, fewer examples: the first non-empty frame shows the change
    shutil.copytree(SUITE, quick)
    toml = (quick / "suite.toml").read_text()
    assert "max_examples = 25" in toml
    (quick / "suite.toml").write_text(toml.replace("max_examples = 25", "max_examples = 5"))
    wrong = _cli("check", str(EXAMPLE / "wrong" / "mutates_input.py"), "--suite", str(quick), "--json")
    assert wrong.returncode == 1, wrong.stderr[-2000:]
    failed = json.loads(wrong.stdout)
    assert [f["test_id"].rpartition("::")[2] for f in failed["failures"]] == ["test_the_input_frame_is_not_changed"]
    # Found, not built: the same image, whatever process asks.
    with DockerBackend() as backend:
        again = ensure(backend, load_suite(SUITE).requirements, sandbox_image)
    assert (again.built, again.image_id, again.tag) == (False, environment_id, env_tag(again.digest))
    assert "numpy" in again.modules and "pandas" in again.modules


def _suite(root: Path, test: str, toml: str = "") -> Path:
    root.mkdir()
    (root / "test_it.py").write_text(test)
    if toml:
        (root / "suite.toml").write_text(toml)
    return root


def test_two_suites_with_different_requirements_never_share_a_warm_sandbox(
    environment_id: str, sandbox_image: str, tmp_path: Path
) -> None:
    """One reuse pool of size 1, jobs alternating between a suite with numpy/pandas (the
    example's requirements, so its image) and one without: each runs in its own image's pool,
    and the one without never finds pandas (it would, in a container the other's jobs had used)."""
    packages = _suite(
        tmp_path / "packages",
        "import pandas as pd\nfrom solution import f\n\n"
        "def test_frame():\n    pd.testing.assert_frame_equal(f(), pd.DataFrame({'a': [1]}))\n",
        'requirements = ["numpy>=2,<3", "pandas==2.*"]\n',
    )
    plain = _suite(
        tmp_path / "plain",
        "import importlib.util\nfrom solution import f\n\n"
        "def test_no_pandas_here():\n    assert importlib.util.find_spec('pandas') is None\n    assert f() == 1\n",
    )
    with_frame = "import pandas as pd\n\ndef f():\n    return pd.DataFrame({'a': [1]})\n"
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), image=sandbox_image, limits=LIMITS) as v:
        runs = [v.check(c, s) for c, s in [(with_frame, packages), ("def f():\n    return 1\n", plain)] * 2]
        assert runs[0].environment is not None
        pools = v.backend.pool_of(sandbox_image), v.backend.pool_of(env_tag(runs[0].environment.digest), "numpy,pandas")  # type: ignore[attr-defined]
    assert [e.status for e in runs] == [Status.PASSED] * 4, [(e.status, e.reason) for e in runs]
    assert [e.image_id == environment_id for e in runs] == [True, False, True, False]
    assert {e.isolation for e in runs} == {"reuse"}
    assert runs[1].environment is None
    assert pools[0] is not pools[1] and pools[0].stats.started >= 1 and pools[1].stats.started >= 1
    assert pools[0].stats.cold_fallbacks == pools[1].stats.cold_fallbacks == 0  # both ran warm


def test_the_agents_sandbox_runs_on_the_suites_environment(environment_id: str) -> None:
    """`DockerSandbox(suite=...)`: the working agent runs its code against the grader's packages."""
    from verifier.agents import DockerSandbox

    with DockerSandbox(suite=SUITE) as sandbox:
        done = sandbox.execute("python3 -c 'import numpy, pandas; print(pandas.__version__, numpy.__version__)'")
    assert done.exit_code == 0, done.output
    pandas_version, numpy_version = done.output.split()
    assert pandas_version.startswith("2.") and numpy_version.startswith("2.")  # the suite's pins, not none
