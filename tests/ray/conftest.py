"""A real two-node Ray cluster on this machine for the session (head + one extra node, loopback,
a port and temp dir of their own), and this test process connected to it as the driver."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.ray.cluster import NODE_START_S, LocalRayCluster
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_PID


def wait_for(predicate: Any, timeout: float = 180.0) -> bool:
    """Whether `predicate` holds within `timeout` s (a bound against hangs: a busy host is slow)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return bool(predicate())


@pytest.fixture(scope="session")
def ray_cluster(sandbox_image: str) -> Iterator[LocalRayCluster]:
    try:
        import ray
    except ImportError:
        pytest.fail("the Ray tests need the ray extra: pip install -e '.[ray]'", pytrace=False)
    # Short: Ray's unix sockets live under it, and their paths may not exceed 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="vray-", dir="/tmp"))
    cluster = LocalRayCluster(root)
    try:
        cluster.start_head()
        cluster.add_node("node1")
        ray.init(address=cluster.address, log_to_driver=False)
        assert wait_for(lambda: alive_nodes() == 2, NODE_START_S), "the two Ray nodes did not come up"
        yield cluster
    finally:
        ray.shutdown()
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def alive_nodes() -> int:
    import ray

    return sum(1 for n in ray.nodes() if n.get("Alive"))


def named_actors(backend_id: str) -> list[str]:
    """Live actors of the backend with this id, on any node."""
    import ray

    names = ray.util.list_named_actors(all_namespaces=True)
    return [a["name"] for a in names if str(a["name"]).startswith(f"verifier-{backend_id}-")]


def containers_of(client: docker.DockerClient, owner_pid: int) -> list[str]:
    filters = {"label": [LABEL_MANAGED, f"{LABEL_OWNER_PID}={owner_pid}"]}
    return [c["Id"] for c in client.api.containers(all=True, filters=filters)]
