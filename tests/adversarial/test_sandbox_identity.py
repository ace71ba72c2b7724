"""A lasting agent sandbox is ours by proof, never by its labels (issue 32, section 4).

Real look-alike containers on the real engine, made as someone else with access to the engine
would make them: our labels copied from a real sandbox onto a container that runs as root, has
a writable root, a network or extra capabilities; one made exactly as we make ours but never
recorded; a real one whose record is gone; a record filed under another container's id; a real
one whose memory limit was raised after it was made. `DockerSandbox.attach` and
`ThreadSandboxes` must refuse each with a reason, and nothing of someone else's (a container,
a volume that a label names) may be removed by them or by `verifier gc`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest

from verifier.agents.sandbox.box import LABEL_AGENT_SANDBOX, LABEL_AGENT_VOLUME, DockerSandbox
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.agents.sandbox.threads import ThreadSandboxes
from verifier.errors import UnknownSandbox
from verifier.sandbox.gc import collect_volumes

pytestmark = pytest.mark.docker

LIMITS = AgentSandboxLimits(workspace_bytes=2 * 1024**2, memory_bytes=256 * 1024**2)
#: A look-alike's main process: stays up, as a sandbox's watchdog does.
STAY = ["sleep", "600"]


class Made:
    """Containers and volumes a test made, removed at its end whatever happened."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client, self.containers, self.volumes = client, list[str](), list[str]()

    def cleanup(self) -> None:
        for name in self.containers:
            try:
                self.client.api.remove_container(name, force=True, v=True)
            except docker.errors.NotFound:
                pass
        for name in self.volumes:
            try:
                self.client.api.remove_volume(name, force=True)
            except docker.errors.NotFound:
                pass


@pytest.fixture
def made(docker_client: docker.DockerClient) -> Iterator[Made]:
    found = Made(docker_client)
    try:
        yield found
    finally:
        found.cleanup()


@pytest.fixture
def real(sandbox_image: str, made: Made) -> Iterator[DockerSandbox]:
    """A real lasting sandbox of ours, to copy labels from."""
    box = DockerSandbox(image=sandbox_image, limits=LIMITS, idle_timeout_s=600)
    made.containers.append(box.id)
    try:
        yield box
    finally:
        box.close()


def labels_of(client: docker.DockerClient, name: str) -> dict[str, str]:
    return dict(client.api.inspect_container(name)["Config"]["Labels"])


def look_alike(made: Made, image: str, labels: dict[str, str], name: str | None = None, **host: Any) -> str:
    """A running container with `labels` (our sandbox's, renamed to it) made as someone else would:
    the image's defaults (root, writable root, the default network) unless `host` says otherwise."""
    client = made.client
    name = name or f"verifier-agent-{uuid.uuid4().hex[:12]}"
    labels = {**labels, LABEL_AGENT_SANDBOX: name}
    user = host.pop("user", "0:0")
    cid = client.api.create_container(
        image, STAY, name=name, user=user, labels=labels, host_config=client.api.create_host_config(**host)
    )["Id"]
    made.containers.append(name)
    client.api.start(cid)
    return name


def refused(name: str, **kwargs: Any) -> UnknownSandbox:
    with pytest.raises(UnknownSandbox) as caught:
        box = DockerSandbox.attach(name, **kwargs)
        box.release()  # served: the test fails below, and this object lets go of it
    assert caught.value.why == "foreign", caught.value
    assert "\n" not in str(caught.value)
    return caught.value


LOOK_ALIKES = {
    "root, writable root, default network": {},
    "root only": {"read_only": True, "network_mode": "none", "cap_drop": ["ALL"]},
    "network on": {"user": "65534:65534", "read_only": True, "cap_drop": ["ALL"]},
    "writable root": {"user": "65534:65534", "network_mode": "none", "cap_drop": ["ALL"]},
    "extra capabilities": {
        "user": "65534:65534",
        "read_only": True,
        "network_mode": "none",
        "cap_add": ["SYS_ADMIN", "NET_ADMIN"],
    },
}


@pytest.mark.parametrize("kind", list(LOOK_ALIKES))
def test_a_look_alike_with_our_labels_is_refused(
    kind: str, real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    name = look_alike(made, sandbox_image, labels_of(made.client, real.id), **LOOK_ALIKES[kind])
    refused(name)


def test_a_look_alike_made_exactly_as_ours_but_never_recorded_is_refused(
    real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    """Same create arguments as ours, hardening and all: only the host's record tells them apart."""
    from verifier.agents.sandbox.identity import create_kwargs

    name = f"verifier-agent-{uuid.uuid4().hex[:12]}"
    image_id = made.client.api.inspect_image(sandbox_image)["Id"]
    kwargs = create_kwargs(name=name, image=image_id, limits=LIMITS, shell="/bin/bash", idle_s=600, volume=None)
    host = made.client.api.create_host_config(**kwargs.pop("host_config"))
    labels = {**labels_of(made.client, real.id), LABEL_AGENT_SANDBOX: name}
    kwargs["labels"] = labels
    cid = made.client.api.create_container(image_id, STAY, name=name, host_config=host, **kwargs)["Id"]
    made.containers.append(name)
    made.client.api.start(cid)
    assert "no record" in str(refused(name))


def test_a_real_sandbox_whose_record_is_gone_is_refused(real: DockerSandbox) -> None:
    from verifier.sandbox import provenance

    provenance.forget(real.container_id)
    assert "no record" in str(refused(real.id))


def test_a_record_filed_under_another_containers_id_is_refused(
    real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    from verifier.sandbox import provenance

    name = look_alike(made, sandbox_image, labels_of(made.client, real.id), read_only=True, network_mode="none")
    theirs = made.client.api.inspect_container(name)["Id"]
    ours = provenance.recall(real.container_id)
    assert ours is not None
    folder = provenance.state_dir() / "made" / "containers"
    copy = folder / f"{theirs}.json"
    copy.write_bytes((folder / f"{real.container_id}.json").read_bytes())
    copy.chmod(0o600)
    try:
        assert "another container's" in str(refused(name))
    finally:
        provenance.forget(theirs)


def test_a_record_that_matches_a_container_not_hardened_as_ours_is_refused(
    real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    """The second proof: even with a record that matches it (an older version's, a bug's), a
    container whose configuration is not what `hardening` makes is refused, naming what differs."""
    from verifier.sandbox import provenance

    name = look_alike(made, sandbox_image, labels_of(made.client, real.id), network_mode="bridge")
    record = made.client.api.inspect_container(name)
    ours = provenance.recall(real.container_id)
    assert ours is not None
    forged = provenance.Made(
        id=record["Id"],
        name=name,
        image=record["Image"],
        config_sha256=provenance.config_sha256(record),
        facts=ours.facts,
    )
    provenance.remember(forged)
    try:
        reason = str(refused(name))
        for what in ("ReadonlyRootfs", "NetworkMode", "CapDrop", "Config.User", "Memory"):
            assert what in reason, reason
    finally:
        provenance.forget(forged.id)


def test_a_real_sandbox_whose_limits_were_raised_after_it_was_made_is_refused(real: DockerSandbox, made: Made) -> None:
    made.client.api.update_container(real.container_id, mem_limit="512m", memswap_limit="512m")
    assert "changed since it was made" in str(refused(real.id))


def test_a_real_sandbox_is_still_attached(real: DockerSandbox) -> None:
    box = DockerSandbox.attach(real.id)
    try:
        assert box.container_id == real.container_id and box.limits == LIMITS
        assert box.execute("id -u").output.strip() == "2000"
    finally:
        box.release()


def test_a_threads_name_squatted_by_a_look_alike_is_never_served(
    real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    sandboxes = ThreadSandboxes(image=sandbox_image, limits=LIMITS, namespace=uuid.uuid4().hex)
    try:
        name = look_alike(made, sandbox_image, labels_of(made.client, real.id), name=sandboxes.sandbox_id("t"))
        with pytest.raises(UnknownSandbox) as caught:
            sandboxes.get_or_create("t")
        assert caught.value.why == "foreign"
        assert sandboxes.delete("t") is False  # not ours to remove either
        assert made.client.api.inspect_container(name)["State"]["Running"]
    finally:
        sandboxes.close()


def test_an_ended_look_alike_cannot_get_someone_elses_volume_removed(
    real: DockerSandbox, made: Made, sandbox_image: str
) -> None:
    """A look-alike whose label names another's volume, ended (as an idle sandbox is): the
    thread's sandbox is made anew and delete() is asked, and that volume must survive both, and
    `verifier gc`'s volume sweep too (the victim carries our labels)."""
    victim = f"victim-{uuid.uuid4().hex[:12]}"
    made.client.api.create_volume(victim, labels={"org.verifier.managed": "1"})
    made.volumes.append(victim)
    sandboxes = ThreadSandboxes(image=sandbox_image, limits=LIMITS, namespace=uuid.uuid4().hex, idle_timeout_s=600)
    try:
        labels = {**labels_of(made.client, real.id), LABEL_AGENT_VOLUME: victim}
        name = look_alike(made, sandbox_image, labels, name=sandboxes.sandbox_id("t"))
        made.client.api.kill(name)
        made.client.api.wait(name, timeout=120)
        with pytest.raises(UnknownSandbox):
            sandboxes.get_or_create("t")
        assert sandboxes.delete("t") is False
        made.client.api.inspect_volume(victim)  # still there
        assert victim not in collect_volumes(made.client)
        made.client.api.inspect_volume(victim)
    finally:
        sandboxes.close()


def test_the_records_are_kept_where_only_this_user_can_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.sandbox import provenance

    monkeypatch.setenv(provenance.STATE_ENV, str(tmp_path / "state"))
    made = provenance.Made(id="a" * 64, name="x", image="sha256:y", config_sha256="z", facts={})
    provenance.remember(made)
    assert provenance.recall("a" * 64) == made
    folder = tmp_path / "state" / "made" / "containers"
    assert (folder.stat().st_mode & 0o777) == 0o700
    folder.chmod(0o777)  # anyone could have written the record: it proves nothing
    with pytest.raises(provenance.ProvenanceError, match="no one else can write"):
        provenance.recall("a" * 64)
    folder.chmod(0o700)
    record = folder / f"{'a' * 64}.json"
    record.chmod(0o666)
    with pytest.raises(provenance.ProvenanceError, match="only this user can write"):
        provenance.recall("a" * 64)
    record.unlink()
    os.symlink(tmp_path / "elsewhere.json", record)
    (tmp_path / "elsewhere.json").write_text(json.dumps(made.model_dump()))
    with pytest.raises(provenance.ProvenanceError, match="cannot be read"):
        provenance.recall("a" * 64)
