"""The command line as a user runs it: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, SUITE


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verifier", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.docker
def test_check_good_exits_0_and_json_hash_matches_sha256sum(sandbox_image: str) -> None:
    done = run("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--json")
    assert done.returncode == 0, done.stderr
    ev = json.loads(done.stdout)
    assert ev["ok"] is True
    assert ev["candidate_sha256"] == hashlib.sha256((EXAMPLE / "good.py").read_bytes()).hexdigest()


@pytest.mark.docker
def test_check_buggy_exits_1_with_a_readable_summary(sandbox_image: str) -> None:
    done = run("check", str(EXAMPLE / "buggy_set.py"), "--suite", str(SUITE))
    assert done.returncode == 1
    assert "NOT OK" in done.stdout and "unhashable" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.docker
def test_syntax_error_exits_1(sandbox_image: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    done = run("check", str(bad), "--suite", str(SUITE), "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "error"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "does not exist"),
        (b"", "empty"),
        (b"\xff\xfe", "not UTF-8"),
        (b"x=1\x00", "NUL"),
        (b"#" * (1024**2 + 1), "limit"),
    ],
    # Named: a test's id goes into PYTEST_CURRENT_TEST, and a megabyte of it in the environment
    # of the CLI's process is more than exec takes (E2BIG).
    ids=["missing", "empty", "not-utf8", "nul", "over-limit"],
)
def test_bad_candidate_exits_2_with_one_line(tmp_path: Path, content: bytes | None, words: str) -> None:
    path = tmp_path / "c.py"
    if content is not None:
        path.write_bytes(content)
    done = run("check", str(path), "--suite", str(SUITE), "--no-build")
    assert done.returncode == 2
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_suite_without_tests_exits_2(tmp_path: Path) -> None:
    done = run("check", str(EXAMPLE / "good.py"), "--suite", str(tmp_path), "--no-build")
    assert done.returncode == 2 and "no tests" in done.stderr and "Traceback" not in done.stderr


def test_bad_option_values_exit_2_without_traceback() -> None:
    done = run("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--memory", "lots")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = run("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--timeout", "-1")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_help_explains_and_schema_is_json() -> None:
    assert "Exit codes" in run("--help").stdout
    assert "--suite" in run("check", "--help").stdout
    schema = json.loads(run("schema").stdout)
    assert schema["title"] == "Evidence"


@pytest.mark.docker
def test_image_build_is_idempotent_and_info_reports_versions(sandbox_image: str) -> None:
    done = run("image", "build")
    assert done.returncode == 0 and "up to date" in done.stdout
    info = json.loads(run("image", "info", "--json").stdout)
    assert info["tag"] == sandbox_image
    assert info["pytest"] == "9.2.0" and info["hypothesis"] == "6.170.15"
    assert info["python"].startswith("3.11")
    languages = info["language_image"]  # built or not, the language image is named
    assert languages["tag"].startswith("verifier-lang:")
    if languages["built"]:
        assert set(languages["toolchains"]) == {"c", "cpp", "java", "nodejs", "go", "rust", "bash"}
        assert any(v.startswith("g++=") for v in languages["toolchains"]["cpp"])


def _on_a_terminal(*args: str) -> tuple[int, bytes, bytes]:
    """`verifier` with its stderr on a terminal (a pty) and stdout on a pipe: (exit code,
    stdout, what the terminal showed)."""
    import os
    import pty

    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "verifier", *args], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.stdout is not None
    out = proc.stdout.read()
    return proc.wait(timeout=300), out, bytes(shown)


@pytest.mark.docker
def test_check_shows_progress_on_a_terminal_and_never_in_json(sandbox_image: str) -> None:
    code, out, shown = _on_a_terminal("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE))
    assert code == 0 and b"OK" in out
    assert b"tests done" in shown and b"/" in shown
    code, out, shown = _on_a_terminal("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    assert b"tests done" not in shown


@pytest.mark.docker
def test_check_shows_no_progress_off_a_terminal(sandbox_image: str) -> None:
    done = run("check", str(EXAMPLE / "good.py"), "--suite", str(SUITE))
    assert done.returncode == 0 and "tests done" not in done.stderr + done.stdout
