"""Reading trees through git: ids as git computes them, patches applied outside the repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.review.repos import commit_blob, git, make_repo, state, zero_blob
from verifier.errors import InvalidInput
from verifier.review.gitread import MODE_EXEC, MODE_LINK, GitRepo, apply_patch, public_uri, tree_id
from verifier.text import shown_name

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


def test_names_that_are_not_utf8_are_shown_quoted_and_never_alike() -> None:
    """Attacks: U+FFFD for every bad byte showed two different file names as one."""
    raw = [
        b"tests/test_\xe9.py",
        b"tests/test_\xe8.py",
        b"tests/test_\xef\xbf\xbd.py",  # the name a replaced byte would have become
        b'"tests/test_\\351.py"',  # a valid name that looks like the quoted form
        b"tests/test_\\351.py",
        b"tests/a\nb.py",
        "tests/ünïcode.py".encode(),
    ]
    names = [os.fsdecode(r) for r in raw] + ["x\ud800"]
    shown = [shown_name(n) for n in names]
    assert len(set(shown)) == len(shown)
    assert all(s.encode("utf-8") for s in shown)
    assert shown[0] == '"tests/test_\\351.py"' and shown[4] == "tests/test_\\351.py"
    assert shown[6] == "tests/ünïcode.py"  # valid names are shown as they are


def test_a_tree_with_a_name_that_is_not_utf8_reads_and_keeps_its_bytes(tmp_path: Path) -> None:
    name = os.fsdecode(b"data_\xff.txt")
    root = make_repo(tmp_path / "r", {name: "x", "a.py": ""})
    snap = GitRepo(root).snapshot("main")
    assert os.fsencode(next(p for p in snap.files if p.startswith("data_"))) == b"data_\xff.txt"
    assert tree_id(snap.files) == snap.tree_id


_PEAK = """
import resource, sys
from pathlib import Path
from verifier.errors import InvalidInput
from verifier.review import gitread
gitread.MAX_TREE_BYTES = 32 * 1024**2
repo = gitread.GitRepo(Path(sys.argv[1]))
base = repo.snapshot("main").files
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for what in ("big", "patch"):
    try:
        if what == "big":
            repo.snapshot("big")
        else:
            gitread.apply_patch(base, Path(sys.argv[2]).read_bytes())
        print(what, "read")
    except InvalidInput as exc:
        print(what, "refused:", exc)
print("grew_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start)
"""


def test_sizes_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    """Attacks: a file of zeros far over the cap, a few hundred KiB in git (or in a binary patch),
    was read whole into the host process before the tree was refused (a 700 MB one took it to
    1.4 GB). Peak memory is measured in a process of its own: it stays under the cap (32 MiB
    here), bounded, not timed."""
    root = make_repo(tmp_path / "r", {"a.py": ""})
    commit_blob(root, "zeros.bin", zero_blob(root, 96 * 1024**2), "big")
    patch = tmp_path / "big.patch"
    patch.write_text(git(root, "diff", "--binary", "main", "big"))
    assert patch.stat().st_size < 1024**2
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(root), str(patch)], capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "big refused: the tree is larger than 32 MiB",
        "patch refused: the patch makes a file larger than 32 MiB",
    ], done.stderr
    assert int(lines[2].split()[1]) < 32 * 1024, lines


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://x-access-token:ghs_SECRET@github.com/org/repo.git", "https://github.com/org/repo.git"),
        ("https://user@example.invalid:8443/r", "https://example.invalid:8443/r"),
        ("git@github.com:org/repo.git", "ssh://github.com/org/repo.git"),
        ("ssh://git@host/org/repo", "ssh://host/org/repo"),
        ("/srv/git/repo.git", "file:///srv/git/repo.git"),
        ("ext::sh -c evil", None),
    ],
)
def test_the_repository_s_address_in_reports_carries_no_credentials(url: str, shown: str | None) -> None:
    assert public_uri(url) == shown


def test_a_repository_without_a_remote_is_named_by_its_folder(repo: Path) -> None:
    assert GitRepo(repo).remote_uri() == repo.resolve().as_uri()
    git(repo, "remote", "add", "origin", "https://tok:en@example.invalid/org/r.git")
    assert GitRepo(repo).remote_uri() == "https://example.invalid/org/r.git"
