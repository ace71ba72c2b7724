"""Build the example git repository that `verifier review` is tried on.

    python examples/review/make_repo.py /tmp/rangeset

Creates DEST as a git repository: `main` holds the library in library/ (rangeset 0.1.0, with
its own pytest + Hypothesis suite), and each patch in changes/ becomes one branch off main:

    fix-adjacent-ranges   a real fix, with the new test that reproduces the bug
    simpler-contains      a "simplification" that breaks contains() at the end of a range
    comma-space           changes the output format and edits the existing tests to match
    from-integers         a new function that adds a dependency (more-itertools)

Commit ids are the same on every machine (fixed names and dates). Standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Reviewer",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Reviewer",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-05T10:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-05T10:00:00Z",
}


def git(dest: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | IDENTITY
    subprocess.run(["git", "-C", str(dest), *args], check=True, env=env, capture_output=True)


def branch_name(patch: Path) -> str:
    return patch.stem.split("-", 1)[1]


def make(dest: Path) -> list[str]:
    """Create the repository at `dest` (which must not exist); returns the branch names."""
    if dest.exists():
        raise SystemExit(f"{dest} exists; give a new path")
    shutil.copytree(HERE / "library", dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "rangeset 0.1.0")
    branches = []
    for patch in sorted((HERE / "changes").glob("*.patch")):
        name = branch_name(patch)
        git(dest, "checkout", "-q", "-b", name, "main")
        git(dest, "am", "-q", "--committer-date-is-author-date", str(patch))
        branches.append(name)
    git(dest, "checkout", "-q", "main")
    return branches


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    dest = Path(sys.argv[1])
    for name in make(dest):
        print(f"{dest}: branch {name} (review it with: verifier review {dest} --base main --head {name})")


if __name__ == "__main__":
    main()
