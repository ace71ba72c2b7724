"""`DockerSandbox(seed_from=PATH)`: a host folder copied into a new sandbox's workspace.

Copied, never mounted: the host folder is read here, once, bounded (`max_files`, `max_bytes`),
and its bytes travel like any upload (`files.UPLOAD` over an exec's stdin, as the
agent's user), so nothing the agent does later reaches the host's files. Caches and `.git` are
left out (`verifier.hashing.SKIP_DIRS`, `*.pyc`); a symbolic link, a FIFO or a device, a name
that is not UTF-8, or a folder over the bounds is refused with the reason, before anything is
sent. Files arrive with mode 0644 (executable bits are not kept).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from verifier.errors import VerifierError
from verifier.hashing import SKIP_DIRS, left_out

#: Most files a seed may hold.
MAX_SEED_FILES = 10_000
#: Most bytes sent in one upload exec.
BATCH_BYTES = 8 * 1024**2


class SeedError(VerifierError, ValueError):
    """The seed folder cannot be copied as it is (the message says why, naming the file)."""


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, host path) of every entry to copy, caches and `.git` pruned."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        for name in list(dirs):
            path = here / name
            if name in SKIP_DIRS:
                dirs.remove(name)
            elif path.is_symlink():
                dirs.remove(name)
                files.append(name)  # refused below, as a link
        dirs.sort()
        for name in sorted(files):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if not left_out(PurePosixPath(rel)):
                yield rel, path


def _check(rel: str, path: Path) -> int:
    """The size of a file that may be copied, or SeedError."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise SeedError(f"seed_from holds a file whose name is not UTF-8: {rel!r}") from None
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise SeedError(f"seed_from holds a symbolic link ({rel}); copy the file instead")
    if not stat.S_ISREG(info.st_mode):
        raise SeedError(f"seed_from holds {rel}, which is not a regular file")
    return info.st_size


def read_seed(
    root: str | os.PathLike[str], *, max_files: int, max_bytes: int, max_file_bytes: int
) -> list[tuple[str, bytes]]:
    """Every file under `root` as (relative POSIX path, bytes), or SeedError naming what is
    refused: not a folder, a link or special file, a file over `max_file_bytes`, or more than
    `max_files` files or `max_bytes` bytes in all (checked from sizes before any file is read)."""
    folder = Path(root)
    if not folder.is_dir():
        raise SeedError(f"seed_from {folder} is not a folder")
    entries: list[tuple[str, Path]] = []
    total = 0
    for rel, path in _walk(folder):
        size = _check(rel, path)
        if size > max_file_bytes:
            raise SeedError(f"seed_from holds {rel} of {size} bytes, over the file size limit of {max_file_bytes}")
        total += size
        entries.append((rel, path))
        if len(entries) > max_files or total > max_bytes:
            raise SeedError(f"seed_from {folder} is over the limit of {max_files} files and {max_bytes} bytes")
    try:
        return [(rel, path.read_bytes()) for rel, path in entries]
    except OSError as exc:
        raise SeedError(f"seed_from {folder} could not be read: {exc}") from exc


def batches(files: list[tuple[str, bytes]], limit: int = BATCH_BYTES) -> Iterator[list[tuple[str, bytes]]]:
    """`files` in runs of at most `limit` bytes (a larger file alone)."""
    run: list[tuple[str, bytes]] = []
    size = 0
    for item in files:
        if run and size + len(item[1]) > limit:
            yield run
            run, size = [], 0
        run.append(item)
        size += len(item[1])
    if run:
        yield run
