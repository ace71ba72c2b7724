"""`verifier serve --ray ADDRESS`: the server's checks run on the warm pools of a Ray cluster's
nodes (the session's real two-node cluster), and stopping the server ends its node actors and
their containers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest

from tests.conftest import EXAMPLE, QUICK_SUITE
from tests.ray.cluster import LocalRayCluster
from tests.ray.conftest import containers_of, wait_for
from tests.serve.server import make_token, start
from verifier.client import Client

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def node_actors() -> dict[str, int]:
    """Live node actors of any backend: name -> the pid of its process (whose containers it owns)."""
    import ray

    found = {}
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = str(entry["name"])
        if not name.startswith("verifier-"):
            continue
        try:
            actor = ray.get_actor(name, namespace=entry["namespace"])
            found[name] = int(ray.get(actor.__ray_call__.remote(lambda _: os.getpid()), timeout=60))
        except (ValueError, ray.exceptions.RayError):
            continue  # ended meanwhile
    return found


def test_a_server_on_a_ray_cluster_checks_on_its_nodes_and_leaves_nothing(
    ray_cluster: LocalRayCluster, sandbox_image: str, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    before = node_actors()
    tokens: dict[str, tuple[str, dict[str, Any]]] = {"alice": (make_token(), {"suites": ["*"]})}
    config = f'[pool]\nsize = 1\n[run_code]\nenabled = false\n[suites]\nquick = "{QUICK_SUITE}"\n'
    server = start(tmp_path, config, tokens, args=("--ray", ray_cluster.address))
    try:
        assert httpx.get(server.url + "/healthz", timeout=30).json()["backend"] == "ray"
        ours = {name: pid for name, pid in node_actors().items() if name not in before}
        assert len(ours) == 2  # one per node
        with Client(server.url, server.tokens["alice"]) as client:
            ev = client.check((EXAMPLE / "good.py").read_text(), "quick")
        assert ev.ok and ev.node is not None and "@ray:" in ev.node
        assert any(containers_of(docker_client, pid) for pid in ours.values())  # the nodes' warm pools
    finally:
        server.stop(timeout=300)
    assert wait_for(lambda: not set(ours) & set(node_actors()), 120), "the server's node actors outlived it"
    assert wait_for(lambda: all(containers_of(docker_client, pid) == [] for pid in ours.values()), 120)
