"""Lasting agent sandboxes on the real engine: one outlives its killed maker, another process
reconnects and finds its files, it ends by itself after its idle timeout and `verifier gc`
removes it and its workspace volume; a LangGraph thread resumed in a second process (SQLite
checkpointer, scripted model) gets its sandbox back; a seed folder is copied in, not mounted."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest

from tests.agents.test_docker_sandbox import gone
from tests.conftest import ROOT
from verifier.agents.sandbox.box import AGENT_UID, LABEL_AGENT_SANDBOX, LABEL_AGENT_VOLUME, DockerSandbox
from verifier.agents.sandbox.threads import ThreadSandboxes
from verifier.errors import UnknownSandbox
from verifier.sandbox.gc import collect, collect_volumes

pytestmark = pytest.mark.docker

#: A bound against hangs, not a speed: on a busy host a container can take a minute to end.
HANG_GUARD_S = 600
MiB = 1024**2

OWNER = textwrap.dedent(
    """
    import sys, time
    from verifier.agents.sandbox.box import DockerSandbox
    from verifier.agents.sandbox.limits import AgentSandboxLimits
    limits = AgentSandboxLimits(workspace_bytes=2 * 1024**2, command_timeout_s=2)
    box = DockerSandbox(image=sys.argv[1], limits=limits, idle_timeout_s=float(sys.argv[2]))
    done = box.execute("echo written by the first process > /workspace/note.txt")
    assert done.exit_code == 0, done.output
    print(box.id, flush=True)
    time.sleep(600)
    """
)


def volume_gone(client: docker.DockerClient, name: str) -> bool:
    try:
        client.api.inspect_volume(name)
    except docker.errors.NotFound:
        return True
    return False


@pytest.fixture
def cleanup(docker_client: docker.DockerClient) -> Iterator[list[str]]:
    """Names of sandboxes a failed test must not leave behind (with their volumes)."""
    names: list[str] = []
    yield names
    for name in names:
        try:
            labels = docker_client.api.inspect_container(name)["Config"]["Labels"]
        except docker.errors.NotFound:
            continue
        docker_client.api.remove_container(name, force=True)
        try:
            docker_client.api.remove_volume(labels[LABEL_AGENT_VOLUME])
        except (docker.errors.NotFound, KeyError):
            pass


def test_a_lasting_sandbox_outlives_its_killed_maker_then_ends_idle_and_gc_removes_it(
    sandbox_image: str, docker_client: docker.DockerClient, cleanup: list[str]
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", OWNER, sandbox_image, "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stderr is not None
    name = child.stdout.readline().strip()
    cleanup.append(name)
    child.kill()  # SIGKILL: no cleanup of any kind runs
    child.wait(timeout=60)
    assert name.startswith("verifier-agent-"), child.stderr.read()

    box = DockerSandbox.attach(name)  # from another process: this one
    assert box.lasting and box.limits.workspace_bytes == 2 * MiB and box.limits.command_timeout_s == 2
    assert box.execute("cat note.txt").output == "written by the first process\n"
    full = box.execute("head -c 3145728 /dev/zero > big; ls -l big | cut -d' ' -f5")
    written = int(full.output.splitlines()[-1])  # the volume's 2 MiB, less the note's page
    assert "No space left on device" in full.output and 2 * MiB - 16 * 1024 <= written <= 2 * MiB
    denied = box.execute("touch /run/verifier-keeper/lease")
    assert "Permission denied" in denied.output and denied.exit_code == 1  # the agent cannot keep it alive
    record = docker_client.api.inspect_container(name)
    volume = record["Config"]["Labels"][LABEL_AGENT_VOLUME]
    assert [m["Name"] for m in record["Mounts"] if m["Destination"] == "/workspace"] == [volume]
    box.release()
    assert box.closed and not gone(docker_client, name)

    deadline = time.monotonic() + HANG_GUARD_S
    while docker_client.api.inspect_container(name)["State"]["Running"]:  # nobody uses it: it ends itself
        assert time.monotonic() < deadline, "the idle sandbox did not end"
        time.sleep(0.5)
    with pytest.raises(UnknownSandbox) as ended:
        DockerSandbox.attach(name)
    assert ended.value.why == "ended"
    mine = (f"{LABEL_AGENT_SANDBOX}={name}",)  # gc's own selection, on this sandbox only (a shared engine)
    assert collect(docker_client, labels=mine) == [record["Id"]]
    assert collect_volumes(docker_client, labels=mine) == [volume]
    assert gone(docker_client, name) and volume_gone(docker_client, volume)
    with pytest.raises(UnknownSandbox) as missing:
        DockerSandbox.attach(name)
    assert missing.value.why == "missing"


def test_a_seed_folder_is_copied_in_never_mounted_and_close_removes_sandbox_and_volume(
    sandbox_image: str, docker_client: docker.DockerClient, cleanup: list[str], tmp_path: Path
) -> None:
    seed = tmp_path / "repo"
    (seed / "pkg" / "__pycache__").mkdir(parents=True)
    (seed / ".git").mkdir()
    (seed / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (seed / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (seed / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (seed / "notes.txt").write_text("hello\n")
    with DockerSandbox(image=sandbox_image, idle_timeout_s=600, seed_from=seed) as box:
        cleanup.append(box.id)
        listing = box.execute("find . -type f | sort; stat -c '%u %a' pkg/mod.py; cat pkg/mod.py")
        assert listing.output == f"./notes.txt\n./pkg/mod.py\n{AGENT_UID} 644\nVALUE = 1\n"
        assert box.execute("echo 'VALUE = 2' > pkg/mod.py").exit_code == 0
        volume = docker_client.api.inspect_container(box.id)["Config"]["Labels"][LABEL_AGENT_VOLUME]
        with DockerSandbox(image=sandbox_image) as fleeting, pytest.raises(UnknownSandbox) as caught:
            DockerSandbox.attach(fleeting.id)
        assert caught.value.why == "fleeting"
    assert (seed / "pkg" / "mod.py").read_text() == "VALUE = 1\n"  # a copy: the host's file is untouched
    assert gone(docker_client, box.id) and volume_gone(docker_client, volume)


def example() -> Any:
    """examples/agent_resume/resume.py as a module."""
    path = ROOT / "examples" / "agent_resume" / "resume.py"
    spec = importlib.util.spec_from_file_location("agent_resume_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_thread_resumed_in_another_process_gets_its_sandbox_and_files_back(
    sandbox_image: str, tmp_path: Path
) -> None:
    """The example's first turn in a process of its own (a SQLite checkpointer, a scripted
    model, ThreadSandboxes keyed by the thread id), its second turn here: another process."""
    resume = example()
    thread, db = f"test-{uuid.uuid4().hex[:8]}", tmp_path / "threads.db"
    argv = [sys.executable, resume.__file__, "start", "--thread", thread, "--db", str(db), "--idle", "300"]
    with ThreadSandboxes(namespace=resume.NAMESPACE) as sandboxes:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG_GUARD_S, env=dict(os.environ))
            assert done.returncode == 0, done.stderr[-3000:]
            first = json.loads(done.stdout.strip().splitlines()[-1])
            second = resume.turn("resume", thread, db, 300.0)
            assert first["pid"] != second["pid"] == os.getpid() and first["sandbox"] == second["sandbox"]
            assert second["requests"] == 2 and "(1 earlier request(s) in this thread)" in second["answer"]
            assert all(line in second["answer"] for line in resume.IDEAS.splitlines())  # the file A wrote
            box = sandboxes.get_or_create(thread)
            assert box.id == first["sandbox"] == sandboxes.sandbox_id(thread)
            assert sandboxes.get_or_create(thread) is box
            assert sandboxes.get_or_create(f"{thread}-other").id != box.id
        finally:
            assert sandboxes.delete(thread)
            sandboxes.delete(f"{thread}-other")
        assert not sandboxes.delete(thread)  # nothing left to remove
