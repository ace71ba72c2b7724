"""A patch's binary hunks cannot make `git apply` hold the host's memory (issue 32, section 5).

An 8 MB patch whose binary hunks add 1.5 GB of zeros made `git apply` hold more than 1 GiB of
host memory before any limit was checked. Now the sizes the hunks declare (`literal N`, `delta N`
and each delta's result size) are summed before git runs, and git runs under a memory limit.
Scaled down to stay cheap: a 64 MiB file (a literal of zeros, and a delta that copies a 64 KiB
source 1024 times), against a budget of 8 MiB, and git under 48 MiB of address space.
Peak memory is measured in a process of its own: the largest child's (git's) maximum RSS.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from tests.review.repos import commit_blob, git, make_repo, zero_blob

MiB = 1024**2
SIZE = 64 * MiB

_APPLY = """
import resource, sys
from pathlib import Path
from verifier.errors import InvalidInput
from verifier.review import gitread
mode, repo, patch = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
if mode == "declared":
    gitread.MAX_PATCH_INFLATED_BYTES = 8 * 1024**2  # the hunks declare 64 MiB
else:
    gitread.MAX_PATCH_INFLATED_BYTES = 1024**3  # declared sizes pass: git's own limit must hold
    gitread._git_memory = lambda budget: 48 * 1024**2
# The base files from the checkout (main), read without git: the only child is `git apply`.
base = {p.name: gitread.Entry("100644", p.read_bytes()) for p in repo.iterdir() if p.is_file()}
try:
    files = gitread.apply_patch(base, patch.read_bytes())
    print("applied", max(len(e.data) for e in files.values()))
except InvalidInput as exc:
    print("refused:", exc)
print("git_kib", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _apply(mode: str, repo: Path, patch: Path) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _APPLY, mode, str(repo), str(patch)], capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stderr[-2000:]
    return lines[0], int(lines[1].split()[1])


def _literal_patch(tmp: Path) -> tuple[Path, Path]:
    root = make_repo(tmp / "lit", {"a.py": ""})
    commit_blob(root, "zeros.bin", zero_blob(root, SIZE), "big")
    patch = tmp / "literal.patch"
    patch.write_text(git(root, "diff", "--binary", "main", "big"))
    assert b"\nliteral 67108864\n" in patch.read_bytes() and patch.stat().st_size < MiB
    return root, patch


def _delta_patch(tmp: Path) -> tuple[Path, Path]:
    source = random.Random(7).randbytes(64 * 1024)
    root = make_repo(tmp / "delta", {"a.py": ""})
    (root / "blob.bin").write_bytes(source)
    git(root, "add", "blob.bin")
    git(root, "commit", "-q", "-m", "source")
    git(root, "checkout", "-q", "-b", "big")
    with open(root / "blob.bin", "wb") as fh:
        for _ in range(SIZE // len(source)):
            fh.write(source)
    git(root, "commit", "-q", "-am", "big")
    git(root, "checkout", "-q", "main")
    patch = tmp / "delta.patch"
    patch.write_text(git(root, "diff", "--binary", "main", "big"))
    data = patch.read_bytes()
    assert b"\ndelta " in data and patch.stat().st_size < MiB, data[:400]
    return root, patch


def test_declared_sizes_are_refused_before_git_inflates_anything(tmp_path: Path) -> None:
    for make in (_literal_patch, _delta_patch):
        repo, patch = make(tmp_path)
        said, git_kib = _apply("declared", repo, patch)
        assert said.startswith("refused: the patch's binary hunks declare 64 MiB, more than 8 MiB"), (make, said)
        assert git_kib < 8 * 1024, (make, git_kib)  # git never ran (or held nothing)


def test_git_itself_runs_under_a_memory_limit(tmp_path: Path) -> None:
    repo, patch = _literal_patch(tmp_path)
    said, git_kib = _apply("memory", repo, patch)
    assert said == "refused: the patch needs more than 48 MiB of memory to apply", said
    assert git_kib < 48 * 1024, git_kib
