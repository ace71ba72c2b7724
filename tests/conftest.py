"""Shared fixtures. Docker tests need a real engine: they fail loudly without one unless
VERIFIER_SKIP_DOCKER=1 is set (for people without Docker); nothing here mocks the engine."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from verifier.limits import Limits
from verifier.sandbox.gc import pid_alive
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_PID

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "find_duplicates"
SUITE = EXAMPLE / "suite"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("VERIFIER_SKIP_DOCKER") == "1" and os.environ.get("VERIFIER_REQUIRE_DOCKER") != "1":
        skip = pytest.mark.skip(reason="VERIFIER_SKIP_DOCKER=1")
        for item in items:
            if "docker" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        pytest.fail(
            f"no Docker engine answers ({exc.__class__.__name__}); run scripts/ensure-docker.sh, "
            "or set VERIFIER_SKIP_DOCKER=1 to skip the Docker tests",
            pytrace=False,
        )
    yield client
    client.close()


@pytest.fixture(scope="session")
def sandbox_image(docker_client: docker.DockerClient) -> str:
    from verifier.sandbox import image

    tag, _ = image.build(docker_client)
    return tag


@pytest.fixture(scope="session")
def verifier(sandbox_image: str) -> Iterator[object]:
    from verifier import Verifier

    with Verifier(image=sandbox_image, limits=Limits(timeout_s=60)) as v:
        yield v


#: When this test session started: containers made before it are not its leftovers (on an
#: engine shared with other checkouts, their killed runs may have left some).
SESSION_START = time.time()


def leftover_containers(client: docker.DockerClient) -> list[str]:
    """Containers of ours made during this session whose owner is this process or a process
    that is gone (a test's subprocess that leaked one), never another live run's."""
    left = []
    for c in client.api.containers(all=True, filters={"label": LABEL_MANAGED}):
        owner = int((c.get("Labels") or {}).get(LABEL_OWNER_PID, "0") or 0)
        if c.get("Created", 0) >= SESSION_START - 1 and (owner == os.getpid() or not pid_alive(owner)):
            left.append(c["Id"])
    return left


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the whole suite no container of ours may remain (a promise of the threat model)."""
    if os.environ.get("VERIFIER_SKIP_DOCKER") == "1":
        return
    try:
        client = docker.from_env(timeout=30)
        left = leftover_containers(client)
    except Exception:
        return
    if left:
        print(f"\nERROR: {len(left)} verifier container(s) left behind: {[c[:12] for c in left]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
