from __future__ import annotations

import subprocess

import docker
import pytest

from tests.conftest import leftover_containers
from verifier.sandbox.docker_engine import owner_labels
from verifier.sandbox.gc import collect
from verifier.sandbox.hardening import LABEL_OWNER_PID

pytestmark = pytest.mark.docker


def test_gc_removes_an_orphan_and_keeps_live_owners(sandbox_image: str, docker_client: docker.DockerClient) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan_labels = owner_labels({LABEL_OWNER_PID: str(dead.pid)})
    orphan = docker_client.api.create_container(sandbox_image, command=["sleep", "60"], labels=orphan_labels)["Id"]
    live = docker_client.api.create_container(sandbox_image, command=["sleep", "60"], labels=owner_labels())["Id"]
    try:
        removed = collect(docker_client)
        assert orphan in removed
        assert live not in removed
        assert [c for c in leftover_containers(docker_client) if c == live] == [live]
    finally:
        for cid in (orphan, live):
            try:
                docker_client.api.remove_container(cid, force=True)
            except docker.errors.NotFound:
                pass
