"""Shared fixtures. Docker tests need a real engine: they fail loudly without one unless
VERIFIER_SKIP_DOCKER=1 is set (for people without Docker); nothing here mocks the engine.

Tests of containment run under each container runtime (`RUNTIMES`): the gVisor ones are marked
`gvisor` and fail loudly when the engine has no runsc runtime, unless VERIFIER_SKIP_GVISOR=1 is
set (never in CI: VERIFIER_REQUIRE_DOCKER=1 overrides both opt-outs)."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from verifier.limits import Limits
from verifier.sandbox.gc import pid_alive
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_PID

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "find_duplicates"
SUITE = EXAMPLE / "suite"


def _with_fewer_examples(suite: Path, max_examples: int) -> Path:
    """A copy of `suite` whose Hypothesis properties run `max_examples` examples.

    One copy per content, shared by every process that imports this module (xdist's workers,
    the subprocesses tests start) and kept between runs: made once under a name that is its
    digest, by an atomic rename, so that no process leaves a copy of its own behind (a worker
    ended by xdist runs no atexit hook)."""
    from verifier.suite import load_suite

    key = load_suite(suite).sha256[:16] + f"-{max_examples}"
    root = Path(tempfile.gettempdir()) / f"verifier-quick-suite-{key}"
    copy = root / suite.name
    if (copy / "suite.toml").is_file():
        return copy
    staging = Path(tempfile.mkdtemp(prefix="verifier-quick-suite-staging-"))
    try:
        shutil.copytree(suite, staging / suite.name)
        manifest = staging / suite.name / "suite.toml"
        text = manifest.read_text()
        assert "max_examples = 200" in text, "the showcase suite's example count moved"
        manifest.write_text(text.replace("max_examples = 200", f"max_examples = {max_examples}"))
        try:
            staging.rename(root)
        except OSError:  # another process made it first: theirs is the same content
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return copy


#: The showcase suite with 20 Hypothesis examples per property instead of 200: same tests and
#: files, for the adversarial tests, which run it once per technique and runtime (a forgery is
#: caught by the suite's structure and its first examples, never by the 200th).
QUICK_SUITE = _with_fewer_examples(SUITE, 20)


#: Every container runtime a containment test runs under; parametrise fixtures or tests with it.
RUNTIMES = [pytest.param("runc", id="runc"), pytest.param("gvisor", id="gvisor", marks=pytest.mark.gvisor)]
_GVISOR_MISSING = pytest.StashKey[str]()


#: The longest test id the suite allows. An id goes into PYTEST_CURRENT_TEST (the environment of
#: every process a test starts: a megabyte of it there is more than exec takes, E2BIG) and into
#: every report; a parameter too big to be its own id gets `ids=`.
MAX_TEST_ID = 500


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    too_long = [item.nodeid[:120] for item in items if len(item.nodeid) > MAX_TEST_ID]
    if too_long:
        raise pytest.UsageError(
            f"{len(too_long)} test ids are over {MAX_TEST_ID} characters (give their parameters ids=): "
            + "; ".join(too_long[:3])
        )
    required = os.environ.get("VERIFIER_REQUIRE_DOCKER") == "1"
    for marker, variable in (("docker", "VERIFIER_SKIP_DOCKER"), ("gvisor", "VERIFIER_SKIP_GVISOR")):
        if os.environ.get(variable) == "1" and not required:
            skip = pytest.mark.skip(reason=f"{variable}=1")
            for item in items:
                if marker in item.keywords:
                    item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """gVisor tests fail at once, with the command that fixes it, when the engine lacks runsc."""
    if "gvisor" not in item.keywords:
        return
    if _GVISOR_MISSING not in item.config.stash:
        from verifier.limits import Limits
        from verifier.sandbox import runtime

        try:
            client = docker.from_env(timeout=30)
            try:
                runtime.require(client.api, Limits(runtime="gvisor"))
            finally:
                client.close()
            item.config.stash[_GVISOR_MISSING] = ""
        except runtime.RuntimeNotRegistered as exc:
            item.config.stash[_GVISOR_MISSING] = f"{exc}; or set VERIFIER_SKIP_GVISOR=1 to skip the gVisor tests"
        except Exception:
            item.config.stash[_GVISOR_MISSING] = ""  # no engine: the docker fixtures say so
    if item.config.stash[_GVISOR_MISSING]:
        pytest.fail(item.config.stash[_GVISOR_MISSING], pytrace=False)


@pytest.fixture(scope="module", params=RUNTIMES)
def runtime(request: pytest.FixtureRequest) -> str:
    """The container runtime (`Limits.runtime`) the module's containment tests run under."""
    return str(request.param)


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


#: How many times a check whose run the host kept waiting (status overloaded: no verdict, the
#: host's fault) is run again before a test sees it, as `verify_batch` and the README tell users
#: to do. A test asserts verdicts, and a busy machine must not fail it; a test that is about the
#: overloaded answer itself takes it raw (`@pytest.mark.raw_overload`).
SETTLE_ATTEMPTS = 4


@pytest.fixture(autouse=True)
def settle_overloaded_runs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("raw_overload") is not None:
        return
    from verifier import Status, Verifier

    check = Verifier.check

    def settled(self: Verifier, candidate: Any, suite: Any, **options: Any) -> Any:
        for _ in range(SETTLE_ATTEMPTS - 1):
            ev = check(self, candidate, suite, **options)
            if ev.status is not Status.OVERLOADED:
                return ev
        return check(self, candidate, suite, **options)

    monkeypatch.setattr(Verifier, "check", settled)


@pytest.fixture(scope="session")
def verifier(sandbox_image: str) -> Iterator[object]:
    from verifier import Verifier

    with Verifier(image=sandbox_image, limits=Limits(timeout_s=60)) as v:
        yield v


def bridge_address(client: docker.DockerClient) -> str:
    """This machine's own IPv4 address on Docker's default bridge, for tests that open a listener
    there and prove a sandbox cannot reach it. The network's IPAM gateway where the engine names
    one; a freshly started Debian engine names only the subnet, and then the bridge holds
    Docker's default, the subnet's first host. Either way the address must be one this machine
    can bind: a probe never targets an address off this machine (the test fails instead)."""
    configs = client.api.inspect_network("bridge")["IPAM"]["Config"] or []
    v4 = [c for c in configs if ipaddress.ip_network(c["Subnet"], strict=False).version == 4]
    assert v4, f"the bridge network has no IPv4 subnet: {configs}"
    gateway = v4[0].get("Gateway") or str(ipaddress.ip_network(v4[0]["Subnet"], strict=False)[1])
    with socket.socket() as probe:
        try:
            probe.bind((gateway, 0))
        except OSError as exc:
            pytest.fail(f"the Docker bridge address {gateway} is not an address of this machine ({exc})")
    return gateway


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
