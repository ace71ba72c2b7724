"""The candidate read from the agent's own sandbox: evidence bound to the bytes on its disk,
verified in a fresh verifier container, and the example as a user runs it (offline)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator

import docker
import docker.errors
import pytest

from tests.conftest import EXAMPLE, SUITE
from verifier import Verifier
from verifier.agents.candidates import NoCandidate, grader_state
from verifier.agents.sandbox.box import DockerSandbox
from verifier.agents.sandbox.candidate import SandboxFile
from verifier.agents.tools import make_run_test_suite

pytestmark = pytest.mark.docker

SOLUTION = "/workspace/solution.py"


@pytest.fixture(scope="module")
def box(sandbox_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(image=sandbox_image) as sandbox:
        yield sandbox


def on_disk_sha256(box: DockerSandbox, path: str = SOLUTION) -> str:
    """What sha256sum says inside the agent's container (not our download)."""
    return box.execute(f"sha256sum {path}").output.split()[0]


def test_evidence_is_for_the_bytes_on_the_agents_disk_and_tampering_cannot_reach_the_judge(
    box: DockerSandbox, verifier: Verifier
) -> None:
    """The agent's workspace holds the buggy candidate plus a conftest.py and a pytest.py that
    would force every test to pass if the tests ran there; they run in a fresh verifier container."""
    box.upload_files(
        [
            (SOLUTION, (EXAMPLE / "buggy_set.py").read_bytes()),
            ("/workspace/conftest.py", b"def pytest_runtest_call(item):\n    pass\n"),
            ("/workspace/pytest.py", b"import sys\nprint('16 passed')\nsys.exit(0)\n"),
        ]
    )
    state = grader_state(SandboxFile(box, SOLUTION), {}, 0)
    tool = make_run_test_suite(SUITE, verifier=verifier, cache=False)
    ev = tool.verify(None, state)
    assert ev.status.value == "failed" and not ev.ok
    assert ev.candidate_sha256 == state["candidate_sha256"] == on_disk_sha256(box)
    assert ev.candidate_is_latest is True


def test_no_candidate_in_the_sandbox_says_why(box: DockerSandbox) -> None:
    box.execute("mkdir -p /workspace/pkg && printf '\\377\\376' > /workspace/latin.py")
    reasons = {}
    for path in ("/workspace/absent.py", "/workspace/pkg", "/workspace/latin.py", "/etc/passwd"):
        with pytest.raises(NoCandidate) as caught:
            SandboxFile(box, path)({})
        reasons[path] = caught.value.reason
    assert "has no /workspace/absent.py" in reasons["/workspace/absent.py"]
    assert "is a folder" in reasons["/workspace/pkg"]
    assert "not UTF-8" in reasons["/workspace/latin.py"]
    assert "cannot be read by the grader" in reasons["/etc/passwd"]
    missing = grader_state(SandboxFile(box, "/workspace/absent.py"), {}, 0)
    assert missing["candidate_source"] is None and "has no /workspace/absent.py" in missing["candidate_missing"]


def run_example(*args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORKING_MODEL", "GRADER_MODEL")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "agent_with_sandbox.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return done, json.loads(done.stdout.strip().splitlines()[-1])


def expected_final_sha256() -> str:
    sys.path.insert(0, str(EXAMPLE))
    try:
        import agent_with_sandbox as example
    finally:
        sys.path.remove(str(EXAMPLE))
    source = (EXAMPLE / "buggy_set.py").read_text().replace(example.SET_BODY, example.LIST_BODY)
    return hashlib.sha256(source.encode()).hexdigest()


@pytest.mark.slow
def test_the_example_ends_accepted_with_the_hash_of_the_file_on_disk(
    sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    done, outcome = run_example("--offline")
    assert done.returncode == 0, done.stderr[-3000:]
    assert outcome["accepted"] is True and outcome["verdicts"] == ["needs_revision", "satisfied"]
    assert outcome["candidate_sha256"] == outcome["disk_sha256"] == expected_final_sha256()
    story = done.stdout.strip().splitlines()[:-1]
    text = "\n".join(story)
    assert "worker -> write_file /workspace/solution.py" in text and "worker -> edit_file" in text
    assert "[1, 2]" in text and "[[1]]" in text  # the worker's own checks, run in its sandbox
    assert "grading pass 0: needs_revision" in text and "grading pass 1: satisfied" in text
    assert "decision: ACCEPTED" in text
    assert [line for line in story if len(line) > 80] == []
    with pytest.raises(docker.errors.NotFound):
        docker_client.api.inspect_container(str(outcome["sandbox"]))


@pytest.mark.slow
def test_an_edit_after_the_last_grading_is_rejected_as_stale(sandbox_image: str) -> None:
    done, outcome = run_example("--offline", "--stale")
    assert done.returncode == 1, done.stderr[-3000:]
    assert outcome["accepted"] is False and str(outcome["reason"]).startswith("stale evidence")
    assert outcome["verdicts"] == ["needs_revision", "satisfied"]
    assert outcome["candidate_sha256"] == outcome["disk_sha256"] != expected_final_sha256()
    assert "user:\n  Add a one-line docstring" in done.stdout


def test_the_example_help_names_the_extra_and_docker() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "agent_with_sandbox.py"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    assert "pip install 'sandboxed-verifier[agents]'" in done.stdout and "Docker" in done.stdout


def test_a_multi_file_candidate_is_read_as_a_tree_from_the_sandbox(box: DockerSandbox, verifier: Verifier) -> None:
    """The three-module package of tests/fixtures/shapes, written in the agent's sandbox: the
    evidence's candidate_sha256 is the tree digest of the folder on the agent's disk."""
    from tests.conftest import ROOT
    from verifier.agents.sandbox.candidate import SandboxFiles
    from verifier.inputs import Candidate

    local = ROOT / "tests" / "fixtures" / "shapes"
    files = sorted(p for p in local.rglob("*.py"))
    box.upload_files([(f"/workspace/cand/{p.relative_to(local).as_posix()}", p.read_bytes()) for p in files])
    state = grader_state(SandboxFiles(box, "/workspace/cand"), {}, 0)
    ev = make_run_test_suite(ROOT / "tests" / "fixtures" / "shapes_suite", verifier=verifier, cache=False).verify(
        None, state
    )
    assert ev.ok, ev.reason
    assert ev.candidate_sha256 == state["candidate_sha256"] == Candidate.from_path(local).sha256
    box.execute("rm -rf /workspace/cand")
    with pytest.raises(NoCandidate, match="has no folder /workspace/cand"):
        SandboxFiles(box, "/workspace/cand")({})
    with pytest.raises(NoCandidate, match="SandboxFiles"):
        SandboxFile(box, "/workspace")({})
