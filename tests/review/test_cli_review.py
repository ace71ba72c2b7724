"""`verifier review` as a user runs it: exit codes, one-line errors, the repository untouched."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.review.repos import make_repo, state
from verifier.sandbox.hardening import LABEL_OWNER_PID

BASE = {
    "lib.py": "def f():\n    return 1\n",
    "tests/test_lib.py": "from lib import f\n\ndef test_f():\n    assert f() == 1\n",
}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verifier", "review", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", BASE, {"lib.py": "def f():\n    return 2\n"})
    (root / "untracked.txt").write_text("the user's work in progress\n")
    (root / "lib.py").write_text("uncommitted edit\n")
    return root


def assert_one_line_error(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--base", "no-such-ref"], "unknown ref 'no-such-ref'"),
        (["--base", "main", "--head", "no-such-ref"], "unknown ref 'no-such-ref'"),
        (["--base", "main", "--patch", "PATCH"], "the patch does not apply"),
        (["--base", "main", "--patch", "MISSING"], "cannot read the patch"),
        (["--base", "main", "--head", "change", "--patch", "PATCH"], "not both"),
        (["--base", "main", "--tests", "mine"], "--tests: 'mine' is not one of 'head', 'base'"),
        (["--base", "main", "-f", "markdown", "-f", "sarif"], "several formats need --out-dir"),
        (["--base", "main", "-f", "html"], "--format: 'html' is not one of 'markdown', 'json', 'junit', 'sarif'"),
        (["--base", "main", "--pytest-args", "-p evil"], "--pytest-args: -p is refused: it would load a plugin"),
        (["--base", "main", "--pytest-args", "tests"], "give test files and folders with --test-path"),
        (["--base", "main", "--test-path", "nowhere.py"], "--test-path 'nowhere.py': no such file or folder"),
        (["--base", "main", "--test-path", "../x"], "--test-path '../x': give a file or folder relative to"),
        # Limits: one line naming the option, never pydantic's text (issue 23, section 4).
        (["--base", "main", "--memory", "0"], "--memory 0: should be greater than or equal to 33554432"),
        (["--base", "main", "--timeout", "0"], "--timeout 0.0: should be greater than 0"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_leaves_the_repository_untouched(
    repo: Path, tmp_path: Path, args: list[str], words: str
) -> None:
    patch = tmp_path / "bad.patch"
    patch.write_text("--- a/lib.py\n+++ b/lib.py\n@@ -1,2 +1,2 @@\n-def g():\n+def h():\n     return 1\n")
    args = [str(patch) if a == "PATCH" else str(tmp_path / "missing.patch") if a == "MISSING" else a for a in args]
    before = state(repo)
    assert_one_line_error(run(str(repo), *args, "--no-build"), words)
    assert state(repo) == before


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert_one_line_error(run(str(tmp_path / "plain"), "--base", "main", "--no-build"), "is not a git repository")
    assert_one_line_error(run(str(tmp_path / "nowhere"), "--base", "main", "--no-build"), "does not exist")


def test_a_tree_with_no_tests(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"lib.py": "x = 1\n", "README.md": "no tests here\n"})
    before = state(root)
    assert_one_line_error(run(str(root), "--base", "main", "--no-build"), "no tests")
    assert state(root) == before


def test_a_dependency_given_by_url_is_refused_by_name(tmp_path: Path) -> None:
    files = dict(BASE) | {"requirements.txt": "evil @ https://example.invalid/evil.whl\n"}
    root = make_repo(tmp_path / "repo", files)
    assert_one_line_error(run(str(root), "--base", "main", "--no-build"), "requirements.txt:1: 'evil @ https://")


@pytest.mark.docker
def test_a_dependency_the_index_cannot_resolve_exits_2_naming_it(sandbox_image: str, tmp_path: Path) -> None:
    files = dict(BASE) | {"requirements.txt": "verifier-no-such-package-e3b0c442==1.0\n"}
    root = make_repo(tmp_path / "repo", files)
    before = state(root)
    done = run(str(root), "--base", "main")
    assert_one_line_error(done, "verifier-no-such-package-e3b0c442")
    assert "cannot be resolved" in done.stderr
    assert state(root) == before


@pytest.mark.docker
def test_the_schema_and_formats_on_disk(sandbox_image: str, repo: Path, tmp_path: Path) -> None:
    schema = json.loads(run("--schema").stdout)
    assert schema["title"] == "ReviewEvidence"
    out = tmp_path / "out"
    before = state(repo)
    done = run(
        str(repo),
        "--base",
        "main",
        "--head",
        "change",
        *["-f", "markdown", "-f", "json", "-f", "junit", "-f", "sarif"],
        "--out-dir",
        str(out),
    )
    assert done.returncode == 1, done.stderr  # f() now returns 2: test_f is broken
    assert sorted(p.name for p in out.iterdir()) == ["review.json", "review.junit.xml", "review.md", "review.sarif"]
    ev = json.loads((out / "review.json").read_text())
    assert ev["counts"]["broken"] == 1 and "NOT OK" in done.stderr
    assert state(repo) == before


@pytest.mark.docker
def test_ctrl_c_removes_both_containers(sandbox_image: str, docker_client: Any, tmp_path: Path) -> None:
    hang = "import time\n\n\ndef test_hang():\n    time.sleep(600)\n"
    root = make_repo(tmp_path / "repo", {"tests/test_hang.py": hang})
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier", "review", str(root), "--base", "main"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )

    def ours() -> list[str]:
        found = docker_client.api.containers(all=True, filters={"label": f"{LABEL_OWNER_PID}={proc.pid}"})
        return [c["Id"] for c in found]

    try:
        for _ in range(600):  # until both sides' containers run (polling, not a timed assertion)
            if len(ours()) == 2 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert len(ours()) == 2
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=600)  # a bound against a hang: cleanup is slow on a busy host
        assert proc.returncode != 0 and b"Traceback" not in err
        assert ours() == []
    finally:
        if proc.poll() is None:
            proc.kill()
