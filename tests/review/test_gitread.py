"""Reading trees through git: ids as git computes them, patches applied outside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.review.repos import git, make_repo, state
from verifier.errors import InvalidInput
from verifier.review.gitread import MODE_EXEC, MODE_LINK, GitRepo, apply_patch, tree_id

FILES = {
    "README.md": "hello\n",
    "src/pkg/__init__.py": "X = 1\n",
    "src/pkg/sub/deep.py": "Y = 2\n",
    "src/pkg-extra.py": "# sorts between 'pkg' and 'pkg/' in git's order\n",
    "tests/test_ünïcode.py": "def test_x(): pass\n",
    "run.sh": "#!/bin/sh\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "r", FILES, {"src/pkg/__init__.py": "X = 2\n", "README.md": None})
    (root / "run.sh").chmod(0o755)
    os.symlink("src/pkg", root / "link")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "exec bit and symlink")
    return root


def test_tree_ids_computed_in_memory_match_git(repo: Path) -> None:
    r = GitRepo(repo)
    for ref in ("main", "change", "main~1"):
        snap = r.snapshot(ref)
        assert tree_id(snap.files) == snap.tree_id == git(repo, "rev-parse", f"{ref}^{{tree}}").strip()
    files = r.snapshot("main").files
    assert files["run.sh"].mode == MODE_EXEC
    assert files["link"].mode == MODE_LINK and files["link"].data == b"src/pkg"


def test_patch_is_applied_outside_the_repository_and_gets_git_s_tree_id(repo: Path, tmp_path: Path) -> None:
    before = state(repo)
    patch = git(repo, "diff", "main", "change", "--binary").encode()
    r = GitRepo(repo)
    patched = apply_patch(r.snapshot("main").files, patch)
    assert tree_id(patched) == r.snapshot("change").tree_id
    assert state(repo) == before


@pytest.mark.parametrize(
    ("ref", "words"),
    [("no-such-branch", "unknown ref"), ("-h", "unknown ref"), ("main..change", "unknown ref"), ("", "unknown ref")],
)
def test_unknown_refs_are_invalid_input(repo: Path, ref: str, words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        GitRepo(repo).resolve(ref)


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a git repository"):
        GitRepo(tmp_path)
    with pytest.raises(InvalidInput, match="does not exist"):
        GitRepo(tmp_path / "missing")


def test_a_patch_that_does_not_apply(repo: Path) -> None:
    bad = b"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-not this line\n+x\n"
    with pytest.raises(InvalidInput, match="does not apply"):
        apply_patch(GitRepo(repo).snapshot("main").files, bad)
