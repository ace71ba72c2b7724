"""The warm pool against the real engine: same evidence as cold, nothing left behind, recovery,
and in `reuse` no candidate can affect the next one."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import docker
import pytest

from tests.conftest import EXAMPLE, SUITE
from verifier import Limits, Status, Suite, Verifier
from verifier.limits import PoolConfig
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_PID
from verifier.suite import Manifest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LIMITS = Limits(timeout_s=30, call_timeout_s=5)


def ours(client: docker.DockerClient) -> list[str]:
    filters = {"label": [LABEL_MANAGED, f"{LABEL_OWNER_PID}={os.getpid()}"]}
    return [c["Id"] for c in client.api.containers(all=True, filters=filters)]


def wait_for(predicate: object, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("policy", ["fresh", "reuse"])
def test_pool_gives_the_same_verdicts_as_cold(
    sandbox_image: str, docker_client: docker.DockerClient, policy: str
) -> None:
    cold = Verifier(image=sandbox_image, limits=LIMITS)
    with Verifier.pooled(PoolConfig(policy=policy, size=2), limits=LIMITS, image=sandbox_image) as pooled:
        for name in ("good.py", "buggy_set.py", "wrong/mutates_input.py"):
            a, b = cold.check(EXAMPLE / name, SUITE), pooled.check(EXAMPLE / name, SUITE)
            assert (a.ok, a.status, a.counts, a.evidence_id) == (b.ok, b.status, b.counts, b.evidence_id)
            assert [f.test_id for f in a.failures] == [f.test_id for f in b.failures]
            assert b.isolation == policy and a.isolation == "fresh"
    assert wait_for(lambda: ours(docker_client) == []), "containers left after close()"


def test_reuse_candidate_cannot_affect_the_next(sandbox_image: str) -> None:
    """A candidate leaves a file, a background child and a shared-memory file; the next sees none."""
    plant = """
import os, subprocess, time
def f():
    open("/tmp/planted", "w").write("x")
    open("/dev/shm/planted", "w").write("x")
    if os.fork() == 0:
        os.setsid()
        time.sleep(600)
        os._exit(0)
    return True
"""
    probe = """
import os
def f():
    uid = os.getuid()
    def mine_and_alive(p):  # from status: candidate processes are not dumpable, so /proc/PID is root's
        fields = dict(line.split(":", 1) for line in open(f"/proc/{p}/status") if ":" in line)
        return int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] not in "ZX"
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and mine_and_alive(p)]
    return [os.path.exists("/tmp/planted"), os.path.exists("/dev/shm/planted"), len(others)]
"""
    suite = Suite(
        files={"test_f.py": b"from solution import f\ndef test_f():\n    assert f() in (True, [False, False, 0])\n"},
        manifest=Manifest(runner="direct"),
    )
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=LIMITS, image=sandbox_image) as v:
        assert v.check(plant, suite).ok
        second = v.check(probe, suite)
        assert second.ok, [f.detail_untrusted[-300:] for f in second.failures]
        assert v.backend.stats.started == 1  # type: ignore[attr-defined]  (the same container served both)


def test_a_shared_trusted_server_serves_job_after_job_in_one_sandbox(sandbox_image: str) -> None:
    """Suites that run in the trusted server itself (HumanEval's: `trusted_process = "shared"`)
    leave it as it was after each job, calls into the candidate included, so one container
    serves them all: a server that found itself changed would end after every job, and the pool
    would pay a container start a check (it did once, when the OOM count's descriptor was first
    opened by a job, after the pristine snapshot counted the server's descriptors)."""
    suite = Suite(
        files={
            "test_f.py": b"from solution import f\n\ndef test_f():\n    assert [f(i) for i in range(3)] == [1, 2, 3]\n"
        },
        manifest=Manifest(runner="direct", trusted_process="shared"),
    )
    with Verifier.pooled(PoolConfig(policy="reuse", size=1, preload=""), limits=LIMITS, image=sandbox_image) as v:
        for _ in range(4):
            evidence = v.check("def f(x):\n    return x + 1\n", suite)
            assert evidence.ok, evidence.reason
        assert v.backend.stats.started == 1  # type: ignore[attr-defined]


def test_reuse_keeps_the_sandbox_after_a_timeout_and_recycles_after_oom(sandbox_image: str) -> None:
    """A timed-out candidate's processes are all killed by the reset, as after any run: the
    sandbox serves on (issue 11: a timeout must not cost a container start). Memory trouble
    (the cgroup hit its limit) still starts the next run in a new sandbox."""
    hang = "def find_duplicates(values):\n    while True:\n        pass\n"
    hog = "def find_duplicates(values):\n    x = []\n    while True:\n        x.append(bytearray(1 << 20))\n"
    limits = Limits(timeout_s=30, call_timeout_s=1, memory_bytes=256 * 1024**2)
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=limits, image=sandbox_image) as v:
        assert v.check(hang, SUITE).status is Status.TIMEOUT
        assert v.check(EXAMPLE / "good.py", SUITE).ok
        assert v.backend.stats.started == 1  # type: ignore[attr-defined]
        assert v.check(hog, SUITE).status is Status.OOM
        assert v.check(EXAMPLE / "good.py", SUITE).ok
        assert v.backend.stats.started >= 2  # type: ignore[attr-defined]


def test_pool_recovers_when_a_container_is_killed_from_outside(
    sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=LIMITS, image=sandbox_image) as v:
        v.backend.warm_up()  # type: ignore[attr-defined]
        for cid in ours(docker_client):
            docker_client.api.kill(cid)
        ev = v.check(EXAMPLE / "good.py", SUITE)
        assert ev.ok, ev.reason
    assert wait_for(lambda: ours(docker_client) == [])


@pytest.mark.engine_restart
@pytest.mark.skipif(os.geteuid() != 0, reason="restarting the engine needs root")
@pytest.mark.skipif(
    os.environ.get("VERIFIER_SHARED_ENGINE") == "1" and os.environ.get("VERIFIER_REQUIRE_DOCKER") != "1",
    reason="VERIFIER_SHARED_ENGINE=1: others use this engine, so it is not restarted (CI always runs this)",
)
def test_batch_survives_an_engine_restart(sandbox_image: str, docker_client: docker.DockerClient) -> None:
    """Restart dockerd mid-batch: the batch finishes; samples are retried or infra_error, none lost."""
    import subprocess

    from verifier.batch import verify_batch

    items = [(EXAMPLE / ("good.py" if i % 2 else "buggy_set.py"), SUITE) for i in range(12)]
    with Verifier.pooled(PoolConfig(policy="reuse", size=2), limits=LIMITS, image=sandbox_image) as v:
        v.backend.warm_up()  # type: ignore[attr-defined]
        restarter = threading.Timer(1.0, lambda: subprocess.run(["bash", "-c", RESTART], check=True))
        restarter.start()
        results = verify_batch(v, items, workers=2, progress=False)
        restarter.join()
    assert len(results) == len(items)
    for i, ev in enumerate(results):
        assert ev.status in ((Status.PASSED,) if i % 2 else (Status.FAILED,)) + (Status.INFRA_ERROR,)
    assert sum(ev.status is not Status.INFRA_ERROR for ev in results) >= len(items) // 2
    assert wait_for(lambda: ours(docker.from_env()) == [], 60)


ROOT = Path(__file__).resolve().parents[2]
RESTART = f"""
pkill -x dockerd; for i in $(seq 1 200); do pgrep -x dockerd >/dev/null || break; sleep 0.1; done
bash {ROOT}/scripts/ensure-docker.sh
"""


def test_jobs_with_other_limits_run_cold(sandbox_image: str) -> None:
    with Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=LIMITS, image=sandbox_image) as v:
        other = Verifier(backend=v.backend, image=sandbox_image, limits=Limits(memory_bytes=300 * 1024**2))
        assert other.check(EXAMPLE / "good.py", SUITE).ok
        assert v.backend.stats.cold_fallbacks == 1  # type: ignore[attr-defined]


def test_idle_pool_releases_its_containers_and_comes_back(
    sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    from verifier.sandbox.pool import WarmPool

    with WarmPool(PoolConfig(size=1, policy="reuse"), image=sandbox_image, limits=LIMITS, idle_timeout_s=1.0) as pool:
        pool.warm_up()
        assert wait_for(lambda: ours(docker_client) == [], 15), "idle containers were not released"
        v = Verifier(backend=pool, image=sandbox_image, limits=LIMITS)
        assert v.check(EXAMPLE / "good.py", SUITE).ok  # demand brings a container back
