"""The Ray backend keeps the contract every SandboxBackend keeps (tests/sandbox/test_contract.py):
the same tests, collected here with a Ray backend on the session's real two-node cluster (one
container per node), under every container runtime. Closing it leaves no actor and no container
on any node."""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest

from tests.conftest import EXAMPLE, SUITE
from tests.ray.cluster import LocalRayCluster
from tests.ray.conftest import containers_of, named_actors, wait_for
from tests.sandbox import test_contract as contract
from verifier import Limits, Verifier
from verifier.cluster import RayBackend
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ray")]

limits = contract.limits
cold = contract.cold


def ray_backend(image: str, limits: Limits) -> RayBackend:
    return RayBackend(PoolConfig(policy="reuse"), image=image, limits=limits, per_node=1)


@pytest.fixture(scope="module")
def backend(ray_cluster: LocalRayCluster, sandbox_image: str, limits: Limits) -> Iterator[RayBackend]:
    with ray_backend(sandbox_image, limits) as made:
        yield made


# The contract's own tests, run against the fixture above (pytest resolves a test's fixtures
# where it is collected, so `backend` here is the Ray one).
test_it_runs_the_jobs_own_command = contract.test_it_runs_the_jobs_own_command
test_it_names_the_image_it_runs = contract.test_it_names_the_image_it_runs
test_same_evidence_as_a_cold_container = contract.test_same_evidence_as_a_cold_container
test_limits_hold = contract.test_limits_hold


def test_close_leaves_no_container(
    ray_cluster: LocalRayCluster, sandbox_image: str, limits: Limits, docker_client: docker.DockerClient
) -> None:
    made = ray_backend(sandbox_image, limits)
    with made:
        nodes = made.nodes
        assert Verifier(backend=made, image=sandbox_image, limits=limits).check(EXAMPLE / "good.py", SUITE).ok
    assert wait_for(lambda: named_actors(made.id) == []), "actors left after close()"
    for node in nodes:
        assert wait_for(lambda node=node: containers_of(docker_client, node.pid) == []), "containers left"
