"""What models type in their sandbox works there (issue 33, section 3): `python` (not only
`python3`, as the README's own `python -c` example types it), `git` (init, commit, log, diff,
offline), and the agent's user has a name (`getpass.getuser()`, `whoami`, `~`), on the real
engine, with every limit as before (read-only root, no network, its uid)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.agents.sandbox.box import AGENT_UID, DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def box(sandbox_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(image=sandbox_image) as sandbox:
        yield sandbox


def run(box: DockerSandbox, command: str) -> str:
    done = box.execute(command)
    assert done.exit_code == 0, done.output
    return done.output


def test_python_is_there_as_models_type_it(box: DockerSandbox) -> None:
    assert run(box, "python -c 'import sys; print(sys.version_info[0])'").strip() == "3"
    assert run(box, "python --version").startswith("Python 3.")


def test_the_agents_user_has_a_name(box: DockerSandbox) -> None:
    out = run(box, "python -c 'import getpass, os; print(getpass.getuser(), os.getuid())'; whoami")
    assert out.split() == ["sandbox", str(AGENT_UID), "sandbox"]


def test_git_works_offline_in_the_workspace(box: DockerSandbox) -> None:
    out = run(
        box,
        "cd /workspace && rm -rf repo && git init -q repo && cd repo && echo one > a.txt && git add a.txt "
        "&& git commit -qm first && echo two >> a.txt && git diff --stat && git log --format=%s",
    )
    assert "a.txt" in out and out.strip().endswith("first")


def test_the_limits_still_hold(box: DockerSandbox) -> None:
    out = box.execute("touch /usr/x 2>&1; echo $?; git clone -q https://example.org/x /tmp/x 2>&1; echo $?").output
    lines = out.strip().splitlines()
    assert lines[0].endswith("Read-only file system") and lines[1] == "1", out
    assert lines[-1] != "0", out  # no network for git either
