"""An agent's interactive sandbox cannot starve the machine's verifications.

Its commands hold no admission slot (they may sleep for an hour, or leave a daemon running);
its container's CPU quota and its lower CPU weight bound it instead."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, SUITE
from verifier import Limits, Status, Verifier
from verifier.agents.sandbox.box import AGENT_CPU_SHARES, DockerSandbox
from verifier.sandbox import admission
from verifier.sandbox.admission import Admission
from verifier.sandbox.docker_engine import DockerBackend

pytestmark = pytest.mark.docker

#: Slots of the private admission folder: as many as this machine has (2).
SLOTS = 2
#: How long the check may wait for a slot before it is `overloaded`.
WAIT_S = 30.0


def test_two_hour_long_commands_do_not_keep_a_verification_out(
    sandbox_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `execute("sleep ...", timeout=0)` in progress (timeout 0 asks for the sandbox's maximum)
    on a machine of two slots: a `Verifier.check` is still admitted at once and passes."""
    slots = tmp_path / "slots"
    # Every default Admission() of this process (the agent sandbox's, had it one) uses these slots.
    monkeypatch.setenv(admission.ENV_DIR, str(slots))
    monkeypatch.setenv(admission.ENV_SLOTS, str(SLOTS))
    box = DockerSandbox(image=sandbox_image)
    workers: list[threading.Thread] = []
    try:
        for _ in range(SLOTS):
            worker = threading.Thread(target=box.execute, args=("sleep 3600",), kwargs={"timeout": 0}, daemon=True)
            worker.start()
            workers.append(worker)
        api = box._client.api
        for _ in range(600):  # until both commands are running in the container
            if sum("sleep 3600" in " ".join(p) for p in api.top(box.container_id)["Processes"]) >= SLOTS:
                break
            threading.Event().wait(0.1)
        else:
            pytest.fail("the two commands never started")
        backend = DockerBackend(admission=Admission(SLOTS, wait_s=WAIT_S, folder=slots))
        with Verifier(backend=backend, image=sandbox_image, limits=Limits(timeout_s=60)) as verifier:
            ev = verifier.check(EXAMPLE / "good.py", SUITE)
        assert ev.status is Status.PASSED, ev.reason
        assert ev.durations.queue_s < WAIT_S  # admitted without waiting for the agent's commands to end
        host = api.inspect_container(box.container_id)["HostConfig"]
        assert host["CpuShares"] == AGENT_CPU_SHARES < 1024  # a verification's default weight is 1024
        assert host["NanoCpus"] == int(box.limits.cpus * 1e9)  # and a bounded quota
    finally:
        box.close()  # removes the container: the sleeping commands end with it
        for worker in workers:
            worker.join(timeout=60)
    assert not any(worker.is_alive() for worker in workers)
