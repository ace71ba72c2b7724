"""Unit tests of the zygote's process plumbing that need no sandbox (run on the host, in forks)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from verifier.runner import reset, zygote

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def zyg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[zygote.Zygote]:
    """A zygote whose children write the candidate under tmp_path and skip becoming the candidate's
    uid (the sandbox's part, tested there)."""
    monkeypatch.setattr(zygote, "CANDIDATE_DIR", str(tmp_path / "candidate"))
    monkeypatch.setattr(zygote, "enter_candidate", lambda *, gvisor: None)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    z = zygote.Zygote(theirs)
    z.modules = ["solution"]
    try:
        yield z
    finally:
        ours.close()
        theirs.close()


def _pipes() -> tuple[list[int], list[int]]:
    """(the child's ends [stdin, stdout, stderr], ours)."""
    (r0, w0), (r1, w1), (r2, w2) = os.pipe(), os.pipe(), os.pipe()
    return [r0, w1, w2], [w0, r1, r2]


def _exit_code(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_programs_own_exit_70_is_its_own(zyg: zygote.Zygote) -> None:
    zyg.files = {"solution.py": b"import sys\nsys.exit(70)\n"}
    theirs, ours = _pipes()
    pid = zyg._spawn_program(theirs, 10)
    try:
        assert _exit_code(pid) == 70
    finally:
        for fd in ours:
            os.close(fd)


def test_a_set_up_that_fails_before_the_program_runs_is_ours(
    zyg: zygote.Zygote, monkeypatch: pytest.MonkeyPatch
) -> None:
    # technique: none of the candidate's; the zygote's child fails its set-up (here: becoming the
    # candidate's uid) and exits 70, which must not read as the program's own exit code 70
    def become_fails(*, gvisor: bool) -> None:
        os._exit(zygote.SETUP_FAILED_EXIT)

    monkeypatch.setattr(zygote, "enter_candidate", become_fails)
    zyg.files = {"solution.py": b"print(1)\n"}
    theirs, ours = _pipes()
    try:
        with pytest.raises(zygote.SetupFailed):
            zyg._spawn_program(theirs, 10)
    finally:
        for fd in ours:
            os.close(fd)
        zyg.reaper.reap()


def test_a_failed_write_of_the_candidates_files_is_ours_too(
    zyg: zygote.Zygote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zyg, "_write_files", lambda: (_ for _ in ()).throw(OSError("disk full")))
    theirs, ours = _pipes()
    try:
        with pytest.raises(zygote.SetupFailed):
            zyg._spawn_program(theirs, 10)
    finally:
        for fd in ours:
            os.close(fd)
        zyg.reaper.reap()


def test_a_zombie_left_after_the_grace_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # technique: none; a zombie of the candidate's uid whose parent does not reap it (here: this
    # test, with its uid as the candidate's) must fail the reset, as a process that would not die
    monkeypatch.setattr(reset, "CANDIDATE_UID", os.getuid())
    monkeypatch.setattr(reset, "ZOMBIE_GRACE_S", 0.05)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        for _ in range(1000):
            if pid in reset.candidate_processes(os.getpid(), zombies=True):
                break
            time.sleep(0.005)
        assert pid in reset.candidate_processes(os.getpid(), zombies=True)
        assert pid not in reset.candidate_processes(os.getpid())  # not among the live ones
        assert reset.zombies_left(os.getpid()) >= 1
    finally:
        os.waitpid(pid, 0)
    assert pid not in reset.candidate_processes(os.getpid(), zombies=True)


def test_the_zygote_imports_no_module_with_an_after_fork_hook() -> None:
    """`threading` and `random` run code in every forked child (os.register_at_fork): in the
    zygote they would cost every candidate process (about 0.2 and 0.3 ms here). A candidate that
    needs them imports them itself."""
    probe = (
        "import importlib, sys\n"
        "sys.path.insert(0, 'verifier')\n"  # the runner alone, as the image installs it
        "from runner import zygote, candidate, program_exec\n"
        "for name in zygote.COMMON_MODULES: importlib.import_module(name)\n"
        "print(sorted({'threading', 'random', 'logging'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
