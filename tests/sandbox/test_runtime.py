"""The container runtime as a user meets it: named on every container, recorded in the evidence
(and its id), reachable from every path (CLI, suite.toml, pools, the agent tool), and a runtime
the engine lacks is a clear, final error naming the command that installs it, never a fall-back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE, SUITE
from verifier import Limits, Status, Verifier
from verifier.cli import app
from verifier.limits import PoolConfig
from verifier.runner.protocol import KERNEL_ENV, JobCounts, format_result_line
from verifier.sandbox import runtime
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.hardening import container_kwargs

LIMITS = Limits(timeout_s=30, call_timeout_s=3)


class FakeAPI:
    """Only `info()`, as the engine answers it; counts the calls."""

    def __init__(self, runtimes: list[str]) -> None:
        self.runtimes = runtimes
        self.calls = 0

    def info(self) -> dict[str, Any]:
        self.calls += 1
        return {"Runtimes": {name: {"path": name} for name in self.runtimes}}


def test_a_missing_runtime_is_named_with_the_command_that_installs_it() -> None:
    with pytest.raises(runtime.RuntimeNotRegistered) as caught:
        runtime.require(FakeAPI(["runc"]), Limits(runtime="gvisor"))
    message = str(caught.value)
    assert "runsc" in message and runtime.INSTALL_COMMAND in message and "\n" not in message
    runtime.require(FakeAPI(["runc", "runsc"]), Limits(runtime="gvisor"))
    api = FakeAPI([])
    runtime.require(api, Limits())  # every engine has runc: it is not even asked
    assert api.calls == 0


@pytest.mark.parametrize("mode", ["plain", "launcher"])
def test_every_container_names_its_runtime(mode: str) -> None:
    for name, engine in (("runc", "runc"), ("gvisor", "runsc")):
        job = SandboxJob(image="i", command=["x"], limits=Limits(runtime=name), mode=mode)  # type: ignore[arg-type]
        assert container_kwargs(job, {})["host_config"]["runtime"] == engine  # never the engine's default


def test_gvisor_limits_processes_inside_and_leaves_room_for_its_own_outside() -> None:
    runc = container_kwargs(SandboxJob(image="i", command=["x"], limits=Limits(pids=64)), {})
    gvisor = container_kwargs(SandboxJob(image="i", command=["x"], limits=Limits(pids=64, runtime="gvisor")), {})
    assert runc["host_config"]["pids_limit"] == 64
    assert "nproc" not in {u["Name"] for u in runc["host_config"]["ulimits"]}  # host-wide per uid under runc
    assert KERNEL_ENV not in runc["environment"]
    nproc = {u["Name"]: (u["Soft"], u["Hard"]) for u in gvisor["host_config"]["ulimits"]}["nproc"]
    assert nproc == (64, 64)
    assert gvisor["host_config"]["pids_limit"] > 64 * 5  # gVisor's ptrace platform: ~5 host threads a process
    assert gvisor["environment"][KERNEL_ENV] == "gvisor"


@pytest.fixture
def no_such_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The engine, asked for gVisor, is asked for a runtime it does not have."""
    monkeypatch.setitem(runtime.ENGINE_NAMES, "gvisor", "verifier-no-such-runtime")
    yield "verifier-no-such-runtime"


@pytest.mark.docker
def test_an_engine_without_the_runtime_gives_infra_error_evidence_never_runc(
    sandbox_image: str, no_such_runtime: str
) -> None:
    limits = LIMITS.model_copy(update={"runtime": "gvisor"})
    with Verifier(image=sandbox_image, limits=limits) as cold:
        ev = cold.check(EXAMPLE / "good.py", SUITE)
    assert ev.status is Status.INFRA_ERROR and not ev.ok and ev.fault.value == "verifier"
    assert no_such_runtime in ev.reason and runtime.INSTALL_COMMAND in ev.reason
    assert ev.limits.runtime == "gvisor"
    # A pool gives up at once with the same reason (it would otherwise retry until its acquire
    # timeout and say only that no sandbox became available).
    with Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=limits, image=sandbox_image) as pooled:
        ev = pooled.check(EXAMPLE / "good.py", SUITE)
    assert ev.status is Status.INFRA_ERROR and no_such_runtime in ev.reason


@pytest.mark.docker
def test_the_cli_says_so_in_one_line_and_exits_2(sandbox_image: str, no_such_runtime: str) -> None:
    done = CliRunner().invoke(app, ["check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--runtime", "gvisor"])
    assert done.exit_code == 2
    assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1
    assert no_such_runtime in done.output and runtime.INSTALL_COMMAND in done.output
    bad = CliRunner().invoke(app, ["check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--runtime", "kata"])
    assert bad.exit_code == 2 and "--runtime" in bad.output and "Traceback" not in bad.output


def test_bench_refuses_an_unknown_runtime_in_one_line(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("")
    done = CliRunner().invoke(app, ["bench", "humaneval", str(samples), "--runtime", "kata"])
    assert done.exit_code == 2 and "--runtime" in done.output and len(done.output.strip().splitlines()) == 1


@pytest.mark.docker
@pytest.mark.gvisor
def test_the_evidence_records_the_runtime_on_every_path(sandbox_image: str, tmp_path: Path) -> None:
    check = [sys.executable, "-m", "verifier", "check", str(EXAMPLE / "good.py"), "--suite", str(SUITE)]
    done = subprocess.run([*check, "--runtime", "gvisor", "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    by_cli = json.loads(done.stdout)
    assert by_cli["limits"]["runtime"] == "gvisor"
    shown = subprocess.run([*check, "--runtime", "gvisor"], capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0 and re.search(r"\bruntime +gvisor\b", shown.stdout), shown.stdout
    with Verifier(image=sandbox_image) as runc:
        assert runc.check(EXAMPLE / "good.py", SUITE).evidence_id != by_cli["evidence_id"]  # not the same fact

    suite = tmp_path / "suite"  # suite.toml asks for gVisor
    shutil.copytree(SUITE, suite)
    with open(suite / "suite.toml", "a") as fh:
        fh.write('\n[limits]\nruntime = "gvisor"\n')
    with Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=LIMITS, image=sandbox_image) as runc_pool:
        ev = runc_pool.check(EXAMPLE / "good.py", suite)  # another runtime than the pool's: a cold gVisor run
    assert ev.ok and ev.limits.runtime == "gvisor"

    from verifier.agents.tools import make_run_test_suite

    tool = make_run_test_suite(SUITE, verifier=Verifier(image=sandbox_image, limits=Limits(runtime="gvisor")))
    ev = tool.verify((EXAMPLE / "good.py").read_text(), {})
    assert ev.ok and ev.limits.runtime == "gvisor"


def _suite_asking(tmp_path: Path, runtime_name: str, extra: str = "") -> Path:
    suite = tmp_path / f"suite-{runtime_name}"
    shutil.copytree(SUITE, suite)
    with open(suite / "suite.toml", "a") as fh:
        fh.write(f'\n[limits]\nruntime = "{runtime_name}"\n{extra}')
    return suite


@pytest.mark.parametrize(
    ("caller", "suite_asks", "runs"),
    [
        ("gvisor", "runc", "gvisor"),
        ("runc", "gvisor", "gvisor"),
        ("runc", "runc", "runc"),
        ("gvisor", "gvisor", "gvisor"),
    ],
)
def test_the_runtime_is_a_floor_a_suite_can_raise_but_never_lower(
    tmp_path: Path, caller: str, suite_asks: str, runs: str
) -> None:
    from verifier.suite import load_suite

    suite = load_suite(_suite_asking(tmp_path, suite_asks, "timeout_s = 7\n"))
    limits = suite.limits(Limits(runtime=caller))  # type: ignore[arg-type]
    assert limits.runtime == runs
    assert limits.timeout_s == 7  # budgets are still the suite's to set
    assert Limits(runtime=caller).overridden({"runtime": suite_asks}).runtime == runs  # type: ignore[arg-type]


def test_every_path_through_the_verifier_runs_the_callers_gvisor(tmp_path: Path) -> None:
    """The Verifier API (which pools, the Ray backend, the agent tool and bench all go through):
    the job sent to the backend, the evidence and the planned evidence id all say gvisor."""
    from verifier.sandbox.fake import FakeBackend, answer

    backend = FakeBackend(answer)
    suite = _suite_asking(tmp_path, "runc")
    with Verifier(backend=backend, image="i", limits=Limits(runtime="gvisor")) as verifier:
        ev = verifier.check(EXAMPLE / "good.py", suite)
        planned = verifier.planned_evidence_id(EXAMPLE / "good.py", suite)
    assert [job.limits.runtime for job in backend.jobs] == ["gvisor"]
    assert ev.limits.runtime == "gvisor" and ev.evidence_id == planned


def test_the_cli_asks_the_engine_for_the_runtime_the_suite_raises_to(tmp_path: Path, no_such_runtime: str) -> None:
    """`--runtime` says runc, suite.toml says gvisor: the engine is asked for gvisor before anything
    is built or run (one red line, exit 2), not for the CLI's runc."""
    suite = _suite_asking(tmp_path, "gvisor")
    from verifier.cli.check import suite_limits

    assert suite_limits(Limits(), suite).runtime == "gvisor"
    assert suite_limits(Limits(runtime="gvisor"), _suite_asking(tmp_path, "runc")).runtime == "gvisor"
    assert suite_limits(Limits(runtime="gvisor"), tmp_path / "missing").runtime == "gvisor"


def test_a_result_from_another_kernel_than_the_runtime_runs_is_no_verdict() -> None:
    """The runner says which kernel it saw; gVisor limits with a runner that saw Linux (a `runsc`
    that is really runc) give infra_error, never evidence that names gVisor."""
    from verifier.runner.protocol import JobResult
    from verifier.sandbox.fake import FakeBackend, raw_run

    def saw(kernel: str) -> FakeBackend:
        def handler(job: SandboxJob) -> Any:
            nonce = str(json.loads(job.stdin.split(b"\n", 1)[0])["nonce"])
            done = JobResult(runner="pytest", exit_code=0, counts=JobCounts(expected=1, passed=1), kernel=kernel)
            return raw_run(format_result_line(nonce, False, done))

        return FakeBackend(handler)

    for asked, seen in (("gvisor", "linux"), ("runc", "gvisor")):
        with Verifier(backend=saw(seen), image="i", limits=Limits(runtime=asked)) as verifier:  # type: ignore[arg-type]
            ev = verifier.check(EXAMPLE / "good.py", SUITE)
        assert ev.status is Status.INFRA_ERROR and not ev.ok, (asked, ev.reason)
        assert f"observed a {seen} kernel" in ev.reason and asked in ev.reason
    with Verifier(backend=saw("gvisor"), image="i", limits=Limits(runtime="gvisor")) as verifier:
        assert verifier.check(EXAMPLE / "good.py", SUITE).ok


@pytest.mark.docker
def test_runc_registered_under_gvisors_name_is_refused(sandbox_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's runc, asked for under the name gVisor is registered as: the runner sees the
    host's kernel, and the host refuses the run, cold and pooled, instead of recording gVisor."""
    monkeypatch.setitem(runtime.ENGINE_NAMES, "gvisor", "runc")
    limits = LIMITS.model_copy(update={"runtime": "gvisor"})
    with Verifier(image=sandbox_image, limits=limits) as cold:
        ev = cold.check(EXAMPLE / "good.py", SUITE)
    assert ev.status is Status.INFRA_ERROR and "observed a linux kernel" in ev.reason, ev.reason
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=limits, image=sandbox_image) as pooled:
        ev = pooled.check(EXAMPLE / "good.py", SUITE)
    assert ev.status is Status.INFRA_ERROR and "observed a linux kernel" in ev.reason, ev.reason


@pytest.mark.docker
@pytest.mark.gvisor
def test_a_gvisor_pool_runs_a_suite_that_asks_for_runc_under_gvisor(sandbox_image: str, tmp_path: Path) -> None:
    """The pool's gVisor is the floor: a suite's `runtime = "runc"` runs in the pool's own gVisor
    containers (no cold run), and the runner observed gVisor (else the check would be infra_error)."""
    from verifier.agents.tools import make_run_test_suite, render

    gvisor = LIMITS.model_copy(update={"runtime": "gvisor"})
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=gvisor, image=sandbox_image) as pooled:
        ev = pooled.check(EXAMPLE / "good.py", _suite_asking(tmp_path, "runc"))
        assert ev.ok and ev.limits.runtime == "gvisor", ev.reason
        tool = make_run_test_suite(_suite_asking(tmp_path / "t", "runc"), verifier=pooled, cache=False)
        shown = render(tool.verify((EXAMPLE / "good.py").read_text(), {}))
    assert "runtime: gvisor" in shown.splitlines()[:6]
    assert pooled.backend.stats.cold_fallbacks == 0  # type: ignore[attr-defined]
