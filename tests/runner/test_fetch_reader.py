"""The reader of `fetch_files` (`reset.fetch`), on this machine's file system: the sweeper runs it
as the candidate's uid inside the sandbox (tests/adversarial/test_fetch_files.py attacks it
there); here it runs with the candidate's folder and uid pointed at a temporary folder and a
made-up uid, so that what the kernel would refuse the candidate is refused by the reader's own
checks: no link followed anywhere on the path, only a regular file the candidate's uid owns (a
hard link to anyone else's file is not its own), no FIFO opened for a read that would wait,
nothing past the byte budget."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from verifier.runner import reset

OWNER = 54321


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    home = tmp_path / "candidate"
    home.mkdir()
    monkeypatch.setattr(reset, "CANDIDATE_DIR", str(home))
    monkeypatch.setattr(reset, "CANDIDATE_UID", OWNER)
    return home


def owned(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chown(path, OWNER, OWNER)
    return path


def by_path(records: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(r["path"]): r for r in records}


def test_the_candidates_own_files_come_back_whole(folder: Path) -> None:
    owned(folder / "a.txt", b"secret")
    owned(folder / "sub" / "deep" / "b.bin", bytes(range(256)))
    os.link(folder / "a.txt", folder / "twin.txt")  # its own file twice: still its own
    got = by_path(reset.fetch(["a.txt", "sub/deep/b.bin", "twin.txt", "missing"], 1000))
    assert base64.b64decode(str(got["a.txt"]["b64"])) == b"secret" and got["a.txt"]["size"] == 6
    assert base64.b64decode(str(got["sub/deep/b.bin"]["b64"])) == bytes(range(256))
    assert got["twin.txt"]["size"] == 6
    assert got["missing"]["error"] == "no such file"


def test_links_fifos_and_others_files_are_refused(folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "trusted.txt"
    secret.write_bytes(b"expected output")  # root's, outside the folder
    os.link(secret, folder / "hard")  # a hard link to a file the candidate does not own
    (folder / "soft").symlink_to(secret)
    (folder / "dir").symlink_to(tmp_path)  # a link in a middle folder
    (folder / "inside").symlink_to(folder)  # even one that stays inside
    os.mkfifo(folder / "pipe")
    os.chown(folder / "pipe", OWNER, OWNER)
    (folder / "sub").mkdir()
    start = time.monotonic()
    got = by_path(
        reset.fetch(["hard", "soft", "dir/trusted.txt", "inside/hard", "pipe", "sub", "../trusted.txt"], 10**6)
    )
    assert time.monotonic() - start < 5  # the FIFO never waited for a writer
    assert "not a file the program's user owns" in str(got["hard"]["error"])
    for path in ("soft", "dir/trusted.txt", "inside/hard"):
        assert "symbolic link" in str(got[path]["error"]), got[path]
    assert "not a regular file" in str(got["pipe"]["error"])
    assert "not a regular file" in str(got["sub"]["error"])
    assert "inside the program's folder" in str(got["../trusted.txt"]["error"])
    assert not any("b64" in record for record in got.values())


def test_the_budget_is_shared_and_never_cut(folder: Path) -> None:
    for n in range(4):
        owned(folder / f"f{n}", bytes([n]) * 100)
    owned(folder / "big", b"x" * 1000)
    got = reset.fetch(["big", "f0", "f1", "f2", "f3"], 250)
    assert "over the 250 bytes" in str(got[0]["error"])
    assert [r.get("size") for r in got[1:3]] == [100, 100]
    assert "over the 50 bytes" in str(got[3]["error"]) and "over the 50 bytes" in str(got[4]["error"])
