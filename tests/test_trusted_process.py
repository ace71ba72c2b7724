"""trusted_process = "shared": a direct suite's jobs run in the trusted server itself, which must
start every job as it started the first one, or end its sandbox (runner/pristine.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from verifier import Candidate, Verifier
from verifier.limits import PoolConfig
from verifier.sandbox.pool import WarmPool

pytestmark = pytest.mark.docker

CANDIDATE = Candidate.from_text("def add(a, b):\n    return a + b\n\n\ndef echo(x):\n    print(x)\n")


def _suite(root: Path, name: str, test: str, trusted_process: str = "shared") -> Path:
    suite = root / name
    suite.mkdir()
    (suite / "suite.toml").write_text(f'runner = "direct"\ntrusted_process = "{trusted_process}"\n')
    (suite / "test_it.py").write_text(test)
    return suite


@pytest.fixture
def pool(sandbox_image: str) -> Iterator[Verifier]:
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), image=sandbox_image) as v:
        yield v


def _stats(v: Verifier) -> tuple[int, int]:
    backend = v.backend
    assert isinstance(backend, WarmPool)
    return backend.stats.started, backend.stats.broken


def test_jobs_that_leave_nothing_share_one_server(pool: Verifier, tmp_path: Path) -> None:
    suite = _suite(
        tmp_path, "clean", "import math\nfrom solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    evidence = [pool.check(CANDIDATE, suite) for _ in range(4)]
    assert all(ev.ok and ev.trusted_process == "shared" for ev in evidence), [ev.reason for ev in evidence]
    assert _stats(pool) == (1, 0)  # one container, never ended


def test_jobs_that_import_a_runner_module_share_one_server(pool: Verifier, tmp_path: Path) -> None:
    # `calls.each` as docs/suites.md shows it: importing it binds `calls` on the runner's package,
    # which the server had before its first job; it ended every sandbox after one job.
    suite = _suite(
        tmp_path,
        "each",
        "from verifier_runner.calls import each\nfrom solution import add\n\n"
        "def test_add():\n    assert list(each(add, [(1, 2), (3, 4)])) == [3, 7]\n",
    )
    evidence = [pool.check(CANDIDATE, suite) for _ in range(3)]
    assert all(ev.ok for ev in evidence), [ev.reason for ev in evidence]
    assert _stats(pool) == (1, 0)


def test_a_job_that_changes_the_server_ends_its_sandbox_and_the_next_job_starts_clean(
    pool: Verifier, tmp_path: Path
) -> None:
    leaky = _suite(
        tmp_path,
        "leaky",
        "import json\nfrom solution import add\n\ndef test_add():\n    json.left_by_a_job = add(1, 2)\n",
    )
    probe = _suite(
        tmp_path,
        "probe",
        "import json\nfrom solution import add\n\n"
        "def test_nothing_is_left():\n    assert not hasattr(json, 'left_by_a_job') and add(1, 2) == 3\n",
    )
    first = pool.check(CANDIDATE, leaky)
    assert first.ok  # its own verdict does not depend on what it left behind
    second = pool.check(CANDIDATE, probe)
    assert second.ok, [f.detail_untrusted[-300:] for f in second.failures]
    assert second.attempts == 1  # not a rerun: the sandbox ended before the job was sent to it
    started, broken = _stats(pool)
    assert started == 2 and broken == 1


def test_every_shared_job_draws_the_same_random_numbers(pool: Verifier, tmp_path: Path) -> None:
    suite = _suite(
        tmp_path, "draw", "import random\nfrom solution import echo\n\ndef test_draw():\n    echo(random.random())\n"
    )
    outputs = {pool.check(CANDIDATE, suite).candidate_output_untrusted for _ in range(3)}
    assert len(outputs) == 1 and next(iter(outputs)).strip()  # as when each job ran in a fork of the same server
    assert _stats(pool) == (1, 0)


@pytest.mark.slow
def test_every_shared_job_draws_the_same_numpy_random_numbers(pool: Verifier, tmp_path: Path) -> None:
    # numpy preloaded in the server (an environment's, `protocol.data_preload`): its global random
    # state is the server's, put back after each job as `random`'s is. The requirement lines are
    # examples/dataframes' (the same environment image: nothing more to build).
    suite = _suite(
        tmp_path,
        "numpy_draw",
        "import numpy as np\nfrom solution import echo\n\n"
        "def test_draw():\n    echo(float(np.random.rand()))\n    np.random.seed(0)\n",
    )
    (suite / "suite.toml").write_text(
        'runner = "direct"\ntrusted_process = "shared"\nrequirements = ["numpy>=2,<3", "pandas==2.*"]\n'
    )
    evidence = [pool.check(CANDIDATE, suite) for _ in range(3)]
    assert all(ev.ok and ev.trusted_process == "shared" for ev in evidence), [ev.reason for ev in evidence]
    outputs = {ev.candidate_output_untrusted for ev in evidence}
    # Not numpy's first draw after seed(0), which a job after the first would see without it.
    assert len(outputs) == 1 and float(next(iter(outputs))) != 0.5488135039273248, outputs


@pytest.mark.slow
def test_a_job_that_sets_a_pandas_option_ends_its_sandbox(pool: Verifier, tmp_path: Path) -> None:
    # pandas preloaded in the server: its options are process state a fork would not keep.
    requirements = 'requirements = ["numpy>=2,<3", "pandas==2.*"]\n'
    leaky = _suite(
        tmp_path,
        "pandas_leaky",
        "import pandas as pd\nfrom solution import add\n\n"
        "def test_add():\n    pd.set_option('display.precision', 2)\n    assert add(1, 2) == 3\n",
    )
    probe = _suite(
        tmp_path,
        "pandas_probe",
        "import pandas as pd\nfrom solution import add\n\n"
        "def test_as_a_fork_sees_it():\n    assert pd.get_option('display.precision') == 6 and add(1, 2) == 3\n",
    )
    for suite in (leaky, probe):
        (suite / "suite.toml").write_text(f'runner = "direct"\ntrusted_process = "shared"\n{requirements}')
    first = pool.check(CANDIDATE, leaky)
    assert first.ok and first.trusted_process == "shared", first.reason
    second = pool.check(CANDIDATE, probe)
    assert second.ok, [f.detail_untrusted[-300:] for f in second.failures]
    assert second.attempts == 1
