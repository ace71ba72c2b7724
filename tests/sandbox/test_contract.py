"""The contract every SandboxBackend keeps (cold, fresh pool, reuse pool, Ray; and the next ones).

A new backend is added to BACKENDS (or, when it needs more than an engine, collects these tests
with a fixture of its own, as tests/ray/test_ray_contract.py does for the Ray backend; the guard
in test_contract_guard.py, which needs no engine, fails for a backend in neither) and must pass
all of this before it is used: it runs the job's own command, gives the same evidence as a cold
container for the same input, enforces time and output limits, and leaves no container behind
when closed. Every backend keeps it under every container runtime (`runtime`: runc, gVisor).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest

from tests.conftest import EXAMPLE, SUITE
from verifier import Evidence, Limits, Status, Verifier
from verifier.limits import PoolConfig
from verifier.sandbox.backend import SandboxBackend, SandboxJob
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.hardening import LABEL_OWNER_PID
from verifier.sandbox.pool import LABEL_POOL_ID, WarmPool

pytestmark = pytest.mark.docker

LIMITS = Limits(timeout_s=30, call_timeout_s=2, output_bytes=64 * 1024)
ADVERSARIAL = Path(__file__).parents[1] / "adversarial" / "candidates"

BACKENDS: dict[str, Callable[[str, Limits], SandboxBackend]] = {
    "cold": lambda image, limits: DockerBackend(),
    "fresh-pool": lambda image, limits: WarmPool(PoolConfig(size=1, policy="fresh"), image=image, limits=limits),
    "reuse-pool": lambda image, limits: WarmPool(PoolConfig(size=1, policy="reuse"), image=image, limits=limits),
}

#: What each entry of BACKENDS makes (for the guard at the end, which must not start one).
BACKEND_TYPES: dict[str, type[SandboxBackend]] = {"cold": DockerBackend, "fresh-pool": WarmPool, "reuse-pool": WarmPool}


@pytest.fixture(scope="module")
def limits(runtime: str) -> Limits:
    return LIMITS.model_copy(update={"runtime": runtime})


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, sandbox_image: str, limits: Limits) -> Iterator[SandboxBackend]:
    made = BACKENDS[request.param](sandbox_image, limits)
    with made:
        yield made


@pytest.fixture(scope="module")
def cold(sandbox_image: str, limits: Limits) -> Iterator[Verifier]:
    with Verifier(image=sandbox_image, limits=limits) as v:
        yield v


def same(a: Evidence, b: Evidence) -> None:
    assert (a.evidence_id, a.status, a.counts) == (b.evidence_id, b.status, b.counts)
    assert [(f.test_id, f.kind, f.message, f.falsifying_example) for f in a.failures] == [
        (f.test_id, f.kind, f.message, f.falsifying_example) for f in b.failures
    ]


def test_it_runs_the_jobs_own_command(backend: SandboxBackend, sandbox_image: str, limits: Limits) -> None:
    job = SandboxJob(image=sandbox_image, command=["python3", "-I", "-c", "print('own command', 6 * 7)"], limits=limits)
    raw = backend.run(job)
    assert raw.exit_code == 0 and b"own command 42" in raw.stdout


def test_it_names_the_image_it_runs(
    backend: SandboxBackend, sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    assert backend.image_id(sandbox_image) == docker_client.api.inspect_image(sandbox_image)["Id"]


@pytest.mark.parametrize("candidate", [EXAMPLE / "good.py", EXAMPLE / "buggy_set.py"], ids=["good", "buggy"])
def test_same_evidence_as_a_cold_container(
    backend: SandboxBackend, sandbox_image: str, cold: Verifier, limits: Limits, candidate: Path
) -> None:
    ev = Verifier(backend=backend, image=sandbox_image, limits=limits).check(candidate, SUITE)
    same(ev, cold.check(candidate, SUITE))
    assert ev.limits.runtime == limits.runtime


@pytest.mark.parametrize(
    ("name", "status"),
    [("infinite_loop.py", Status.TIMEOUT), ("stdout_flood.py", Status.OUTPUT_LIMIT), ("memory_bomb.py", Status.OOM)],
)
def test_limits_hold(backend: SandboxBackend, sandbox_image: str, limits: Limits, name: str, status: Status) -> None:
    ev = Verifier(backend=backend, image=sandbox_image, limits=limits).check(ADVERSARIAL / name, SUITE)
    assert ev.status is status, ev.reason


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_close_leaves_no_container(
    name: str, sandbox_image: str, limits: Limits, docker_client: docker.DockerClient
) -> None:
    started = time.time() - 1
    made = BACKENDS[name](sandbox_image, limits)
    with made:
        assert Verifier(backend=made, image=sandbox_image, limits=limits).check(EXAMPLE / "good.py", SUITE).ok
    mine = getattr(made, "pool_id", None)  # the module's other pools keep replacing their own meanwhile
    left = [
        c["Id"]
        for c in docker_client.api.containers(all=True, filters={"label": f"{LABEL_OWNER_PID}={os.getpid()}"})
        if c["Created"] >= started and (c.get("Labels") or {}).get(LABEL_POOL_ID) == mine
    ]
    assert left == []


#: Backends whose contract tests live elsewhere (they need more than an engine), and the test
#: doubles that never run a candidate.
CONTRACT_ELSEWHERE = {"RayBackend": "tests/ray/test_ray_contract.py"}
TEST_DOUBLES = {"FakeBackend"}
