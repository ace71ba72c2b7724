"""DockerSandbox against the real engine: what a command may do, how it is stopped, and that
the container goes away with the session (also after an exception, Ctrl-C, or a killed owner)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest

from tests.conftest import bridge_address
from verifier.agents.sandbox.box import AGENT_UID, LABEL_AGENT_SANDBOX, DockerSandbox
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.sandbox.gc import owner_alive
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID

pytestmark = pytest.mark.docker

#: Every process in the container with its command line, one per line (the image has no ps).
PROCESSES = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"


@pytest.fixture(scope="module")
def box(sandbox_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(image=sandbox_image) as sandbox:
        yield sandbox


def running(sandbox: DockerSandbox, marker: str) -> list[str]:
    """Command lines of the container's processes that contain `marker` (ours excluded)."""
    listing = sandbox.execute(PROCESSES).output.splitlines()
    return [line for line in listing if marker in line and "/proc/[0-9]*" not in line and "verifier-exec" not in line]


def gone(client: docker.DockerClient, name: str) -> bool:
    try:
        client.api.inspect_container(name)
    except docker.errors.NotFound:
        return True
    return False


# -- what a command may do ----------------------------------------------------------------
def test_commands_run_unprivileged_in_the_workspace_with_nothing_from_the_host(
    sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIFIER_HOST_SECRET", "s3cret")
    with DockerSandbox(image=sandbox_image) as sandbox:
        done = sandbox.execute(
            "id -u; id -g; pwd; env; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; touch /usr/x"
        )
    lines = done.output.splitlines()
    assert lines[:3] == [str(AGENT_UID), str(AGENT_UID), "/workspace"]
    assert "s3cret" not in done.output and "VERIFIER_HOST_SECRET" not in done.output
    assert "CapEff:\t0000000000000000" in lines and "CapBnd:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines
    assert "Read-only file system" in done.output and done.exit_code == 1


def test_output_comes_merged_in_order_with_the_exit_code(box: DockerSandbox) -> None:
    done = box.execute("echo one; echo two >&2; echo three; exit 7")
    assert (done.output, done.exit_code, done.truncated) == ("one\ntwo\nthree\n", 7, False)
    assert box.execute("cat").output == ""  # no stdin: a command that reads it does not hang


def test_the_network_is_unreachable(box: DockerSandbox, docker_client: docker.DockerClient, sandbox_image: str) -> None:
    """Only loopback inside; a listener this test opens on the host's Docker bridge cannot be reached."""
    address = bridge_address(docker_client)
    listener = socket.create_server((address, 0))
    listener.settimeout(0)
    port = listener.getsockname()[1]
    probe = (
        "import socket\n"
        f"try:\n    socket.create_connection(({address!r}, {port}), timeout=3)\n    print('reached')\n"
        "except OSError as exc:\n    print('unreachable', exc.errno)\n"
    )
    try:
        # Control: from a container on the bridge the same probe connects, so the probe works.
        control = docker_client.containers.run(
            sandbox_image, ["python3", "-c", probe], network_mode="bridge", remove=True
        )
        assert control.startswith(b"reached"), control
        listener.accept()[0].close()
        interfaces = box.execute("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '").output.split()
        done = box.execute(f"python3 -c {_quote(probe)}")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody came from the sandbox
    finally:
        listener.close()
    assert interfaces == ["lo"]
    assert done.output.startswith("unreachable"), done.output


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def test_a_timeout_kills_every_process_of_the_command(box: DockerSandbox) -> None:
    marker = f"sleep {300 + uuid.uuid4().int % 1000}"
    done = box.execute(f"trap '' TERM; {marker} & {marker}; echo never", timeout=1)
    assert done.exit_code == 124
    assert "timed out after 1 s" in done.output and "never" not in done.output
    assert running(box, marker) == []
    assert box.execute("echo next").output == "next\n"


@pytest.mark.slow
def test_a_fork_bomb_is_contained(sandbox_image: str) -> None:
    """The classic bomb returns at once: what it left in its group is killed when it ends. One
    that also waits runs into the pids limit until its timeout; the kill comes from inside the
    container then (no new exec can start). Either way the sandbox lives on, empty."""
    with DockerSandbox(image=sandbox_image, limits=AgentSandboxLimits(pids=64)) as sandbox:
        sandbox.execute(":(){ :|:& };:", timeout=30)
        assert running(sandbox, "bash") == []
        assert sandbox.execute("echo alive").output == "alive\n"
        waited = sandbox.execute(":(){ :|:& };: ; sleep 60", timeout=3)
        assert waited.exit_code == 124 and "timed out after 3 s" in waited.output
        assert "Resource temporarily unavailable" in waited.output  # it did reach the limit
        assert running(sandbox, "bash") == []
        assert sandbox.execute("echo alive").output == "alive\n"


def test_an_output_flood_is_cut_and_stopped(sandbox_image: str) -> None:
    cap = 64 * 1024
    with DockerSandbox(image=sandbox_image, limits=AgentSandboxLimits(output_bytes=cap)) as sandbox:
        flood = sandbox.execute("yes")
        large = sandbox.execute("head -c 200000 /dev/zero | tr '\\0' x")
    assert flood.truncated and flood.exit_code not in (0, None)
    assert "and was stopped" in flood.output and len(flood.output) < cap + 300
    assert large.truncated and large.exit_code == 0  # over the cap, under the flood limit: cut, not stopped
    assert large.output.startswith("x" * cap) and "[output cut at 65536 bytes]" in large.output


def test_the_memory_limit_holds_and_the_sandbox_survives(sandbox_image: str) -> None:
    limits = AgentSandboxLimits(memory_bytes=128 * 1024**2)
    with DockerSandbox(image=sandbox_image, limits=limits) as sandbox:
        done = sandbox.execute("python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'")
        assert done.exit_code != 0 and "536870912" not in done.output
        assert sandbox.execute("echo alive").output == "alive\n"


def test_timeouts_are_checked_and_empty_commands_refused(box: DockerSandbox) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        box.execute("true", timeout=-1)
    with pytest.raises(ValueError, match="maximum"):
        box.execute("true", timeout=10**6)
    assert box.execute("   ").exit_code == 1


# -- async ----------------------------------------------------------------------------
def test_async_execute_keeps_the_event_loop_free(box: DockerSandbox) -> None:
    """The command waits for a file that only another coroutine creates: with a blocked
    event loop it could only end by its timeout."""
    flag = f"/workspace/go-{uuid.uuid4().hex[:8]}"

    async def main() -> tuple[object, object]:
        waiting = asyncio.create_task(
            box.aexecute(f"while [ ! -e {flag} ]; do sleep 0.05; done; echo released", timeout=60)
        )
        await asyncio.sleep(0)
        [upload] = await box.aupload_files([(flag, b"")])
        return await waiting, upload

    done, upload = asyncio.run(main())
    assert upload.error is None  # type: ignore[attr-defined]
    assert (done.output, done.exit_code) == ("released\n", 0)  # type: ignore[attr-defined]


def test_cancelling_an_async_command_kills_it(box: DockerSandbox) -> None:
    marker = f"sleep {300 + uuid.uuid4().int % 1000}"

    async def main() -> None:
        task = asyncio.create_task(box.aexecute(f"{marker}; echo never", timeout=600))
        while not running(box, marker):  # running() is a sync call: the task's thread goes on meanwhile
            await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert running(box, marker) == []


# -- the container's life -------------------------------------------------------------
def test_a_missing_image_or_engine_is_a_clear_error(docker_client: docker.DockerClient) -> None:
    with pytest.raises(ImageNotFound, match="verifier image build"):
        DockerSandbox(image="verifier-sandbox:no-such-recipe", client=docker_client)
    away = docker.DockerClient(base_url="unix:///nonexistent.sock", version="1.41")
    with pytest.raises(SandboxUnavailable):
        DockerSandbox(image="verifier-sandbox:any", client=away)


def test_the_container_carries_gc_labels_and_goes_with_the_session(
    sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    with DockerSandbox(image=sandbox_image) as sandbox:
        labels = docker_client.api.inspect_container(sandbox.id)["Config"]["Labels"]
        assert labels[LABEL_AGENT_SANDBOX] == sandbox.id and labels[LABEL_MANAGED] == "1"
        assert labels[LABEL_OWNER_PID] == str(os.getpid()) and labels[LABEL_OWNER_HOST] == socket.gethostname()
    assert gone(docker_client, sandbox.id) and sandbox.closed
    sandbox.close()  # again: nothing to do
    after = sandbox.execute("echo hi")
    assert after.exit_code is None and "closed" in after.output
    assert sandbox.download_files(["/workspace/x"])[0].error is not None


def test_the_container_goes_also_after_an_exception(sandbox_image: str, docker_client: docker.DockerClient) -> None:
    names = []
    with pytest.raises(RuntimeError, match="boom"), DockerSandbox(image=sandbox_image) as sandbox:
        names.append(sandbox.id)
        raise RuntimeError("boom")
    assert gone(docker_client, names[0])


#: How long a child may take to clean up after Ctrl-C before the test calls it a hang. A bound,
#: not a speed: on a busy host removing a container can take a minute and more.
HANG_GUARD_S = 600

CHILD = textwrap.dedent(
    """
    import sys, time
    from verifier.agents.sandbox.box import DockerSandbox
    with DockerSandbox(image=sys.argv[1]) as sandbox:
        print(sandbox.id, flush=True)
        if sys.argv[2] == "command":
            sandbox.execute("sleep 777", timeout=600)
        else:
            time.sleep(600)
    """
)


def _child(sandbox_image: str, mode: str) -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, sandbox_image, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As in a terminal: a shell's background job (nohup ... &) starts with SIGINT ignored,
        # and Python then never raises KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout is not None
    name = child.stdout.readline().strip()
    assert name.startswith("verifier-agent-"), child.stderr.read() if child.stderr else ""
    return child, name


@pytest.mark.slow
def test_ctrl_c_during_a_command_removes_the_container(sandbox_image: str, docker_client: docker.DockerClient) -> None:
    child, name = _child(sandbox_image, "command")
    try:
        while not any("sleep 777" in " ".join(p) for p in docker_client.api.top(name)["Processes"]):
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=HANG_GUARD_S)
        assert "KeyboardInterrupt" in err
        assert gone(docker_client, name)
    finally:
        child.kill()
        if not gone(docker_client, name):  # failed: leave no container to fail the tests after this
            docker_client.api.remove_container(name, force=True)


@pytest.mark.slow
def test_a_killed_owner_leaves_a_stopped_container_that_gc_knows(
    sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    """SIGKILL runs no cleanup: the keep-alive sees its stdin close and the container stops;
    its labels tell `verifier gc` that the owner is gone. (We remove it ourselves here rather
    than run gc, which would also remove other checkouts' orphans on a shared engine.)"""
    child, name = _child(sandbox_image, "idle")
    child.kill()
    child.wait(timeout=60)
    try:
        state = docker_client.api.inspect_container(name)
        while state["State"]["Running"]:
            time.sleep(0.2)
            state = docker_client.api.inspect_container(name)
        labels = state["Config"]["Labels"]
        assert LABEL_MANAGED in labels and labels[LABEL_OWNER_HOST] == socket.gethostname()
        assert not owner_alive(labels)  # what verifier.sandbox.gc.collect removes
    finally:
        docker_client.api.remove_container(name, force=True)


EXEC_SOCKETS_SCRIPT = """
import gc
import sys
from tests.sandbox.test_docker_engine import _docker_sockets
from verifier.agents.sandbox.box import DockerSandbox
gc.disable()  # each command's stream is closed when it ends, not when the collector finds it
with DockerSandbox(image=sys.argv[1]) as sandbox:
    assert sandbox.execute("echo warm").exit_code == 0
    before = _docker_sockets()
    for n in range(int(sys.argv[2])):
        assert sandbox.execute(f"echo {n}").output.strip() == str(n)
    print(before, _docker_sockets())
"""


def test_each_command_releases_its_connection_to_the_engine(sandbox_image: str) -> None:
    """A long agent session runs thousands of commands: each one's exec stream is closed when
    the command ends (a socket per command would run the process out of descriptors). The SDK's
    connection pool may grow to its bound meanwhile; a leak grows by one per command."""
    from docker.constants import DEFAULT_MAX_POOL_SIZE

    commands = 3 * DEFAULT_MAX_POOL_SIZE
    done = subprocess.run(
        [sys.executable, "-c", EXEC_SOCKETS_SCRIPT, sandbox_image, str(commands)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = map(int, done.stdout.split())
    assert after - before <= DEFAULT_MAX_POOL_SIZE
