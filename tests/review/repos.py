"""Small git repositories for review tests, built commit by commit from dicts of files."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from collections.abc import Mapping
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | IDENTITY
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True, text=True)
    return done.stdout


def write(repo: Path, files: Mapping[str, str | None]) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def make_repo(root: Path, base: Mapping[str, str | None], head: Mapping[str, str | None] | None = None) -> Path:
    """A repository with `main` (base files) and, if given, a `change` branch (head edits on top)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, base)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    if head is not None:
        git(root, "checkout", "-q", "-b", "change")
        write(root, head)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "change")
        git(root, "checkout", "-q", "main")
    return root


def state(repo: Path) -> tuple[str, str, str, str]:
    """What must not change: status (incl. untracked and ignored), refs, HEAD, and the object count."""
    return (
        git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all"),
        git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(repo, "rev-parse", "HEAD") + git(repo, "symbolic-ref", "-q", "HEAD"),
        git(repo, "count-objects", "-v"),
    )


def add_branch(repo: Path, name: str, files: Mapping[str, str | None], start: str = "main") -> None:
    """A branch `name` off `start` with one commit that writes `files`."""
    git(repo, "checkout", "-q", "-b", name, start)
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)
    git(repo, "checkout", "-q", "main")


def zero_blob(repo: Path, size: int) -> str:
    """A blob of `size` zero bytes written as a loose object, streamed: never the file itself, and
    a few hundred KiB in git however large it is."""
    header = f"blob {size}\0".encode()
    digest = hashlib.sha1(header)
    packer = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [packer.compress(header)]
    left = size
    while left:
        piece = chunk[: min(left, len(chunk))]
        digest.update(piece)
        parts.append(packer.compress(piece))
        left -= len(piece)
    parts.append(packer.flush())
    oid = digest.hexdigest()
    target = repo / ".git" / "objects" / oid[:2] / oid[2:]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"".join(parts))
    return oid


def commit_blob(repo: Path, path: str, oid: str, branch: str) -> None:
    """A branch `branch` off main with one commit that adds the blob `oid` at `path` (index only)."""
    git(repo, "checkout", "-q", "-b", branch, "main")
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}")
    git(repo, "commit", "-q", "-m", branch)
    git(repo, "reset", "-q", "--hard")
    git(repo, "checkout", "-q", "main")
