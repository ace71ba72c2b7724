"""The candidate: its bytes and their digest, checked before anything runs. Never executed here.

A candidate is one file (the module the suite imports, `solution` by default) or a folder of
modules (a package, or several top-level modules). The tests may import only the modules the
suite declares (`modules`, else `module`, in suite.toml: `Candidate.importable`); the folder's
other modules are its own, importable from its own code. Its digest, `candidate_sha256`, is the
SHA-256 of the file's bytes, or for a folder the tree digest of `verifier.hashing.tree_sha256`:
over the files sorted by relative POSIX path, each path and each content prefixed with its
length as 8 big-endian bytes. No modes, times or owners enter it, so the same files give the
same digest on every machine.

A folder has one canonical form (`verifier.runner.trees`: normalised relative POSIX paths in
NFC, no `.`/`..`/empty component, no backslash, control or invisible character, no two paths
that are one file on a case-insensitive disk, no file that is also a folder, no module defined
twice, no compiled code, every name one the sandbox can create). Every way a folder enters
(`from_path`, `from_files`, `Candidate(tree=...)`, an agent's state) goes through it when the
`Candidate` is made, before anything is hashed: a tree that is not canonical is refused, never
repaired, so the digest is always over exactly the files the sandbox writes.

A refusal is bound to content too: `InvalidInput.sha256` names the refused bytes whenever
there were bytes to read (an empty file, invalid UTF-8, a NUL byte, a file over the limit; for
a folder refused for its paths, the same tree digest over the paths as given).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from verifier.errors import InvalidInput
from verifier.hashing import left_out, sha256_bytes, tree_sha256
from verifier.runner.protocol import module_names
from verifier.runner.trees import shown, tree_problem

MAX_CANDIDATE_BYTES = 1024**2
#: A candidate folder: at most this many files, this many bytes in all.
MAX_TREE_FILES = 200
MAX_TREE_BYTES = 4 * 1024**2
#: Never part of a candidate folder (caches, version control).


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _looks_like_a_path(text: str) -> bool:
    if "\n" in text or len(text) > 4096 or not text.strip():
        return False
    stripped = text.strip()
    try:
        return stripped.endswith(".py") or Path(stripped).exists()
    except OSError:
        return False


def _encodes(text: str) -> bool:
    """Whether `text` is valid Unicode (a file name read as bytes that are not UTF-8 holds lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _tree_paths(root: Path) -> list[tuple[str, Path]]:
    found = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if left_out(rel):
            continue
        if not _encodes(rel.as_posix()):
            raise InvalidInput(
                f"candidate folder {root} holds a file whose name is not UTF-8",
                detail_untrusted=f"the name: {rel.as_posix().encode('utf-8', 'surrogateescape')!r}",
            )
        if p.is_symlink():
            raise InvalidInput(
                f"candidate folder {root} holds a symbolic link; copy the file instead",
                detail_untrusted=f"the link: {rel.as_posix()}",
            )
        if p.is_file():
            found.append((rel.as_posix(), p))
    return found


def _streamed_tree_sha256(paths: list[tuple[str, Path]]) -> str:
    """`tree_sha256` of files on disk, one file at a time (for a folder too big to hold)."""
    h = hashlib.sha256()
    for rel, p in sorted(paths):
        name = rel.encode("utf-8")
        h.update(len(name).to_bytes(8, "big") + name + p.stat().st_size.to_bytes(8, "big"))
        with open(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _read_tree(root: Path) -> dict[str, bytes]:
    paths = _tree_paths(root)
    if len(paths) > MAX_TREE_FILES or sum(p.stat().st_size for _, p in paths) > MAX_TREE_BYTES:
        raise InvalidInput(
            f"candidate folder {root} is over the limit of {MAX_TREE_FILES} files and {MAX_TREE_BYTES // 1024**2} MiB",
            sha256=_streamed_tree_sha256(paths),
        )
    return {rel: p.read_bytes() for rel, p in paths}


def _raw_tree_sha256(tree: Mapping[str, bytes]) -> str:
    """`tree_sha256` over paths as given (a refused tree's, whose paths may not even be UTF-8)."""
    h = hashlib.sha256()
    for path in sorted(tree):
        name = path.encode("utf-8", "surrogatepass")
        data = tree[path]
        h.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def canonical_tree(tree: Mapping[str, bytes | bytearray | str], label: str = "<files>") -> dict[str, bytes]:
    """A copy of `tree` (str contents as UTF-8) when it is canonical (`verifier.runner.trees`);
    else InvalidInput naming what was refused (trusted words), with the path as untrusted detail
    and the digest of the tree as given."""
    files: dict[str, bytes] = {}
    for path, data in tree.items():
        if not isinstance(path, str):
            raise TypeError(f"a candidate folder's paths are str, not {type(path).__name__}")
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        elif not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a candidate folder's contents are bytes or str, not {type(data).__name__}")
        files[path] = bytes(data)
    problem = tree_problem(files)
    if problem is not None:
        why, paths = problem
        raise InvalidInput(
            f"candidate folder {label} is refused: it has {why}",
            sha256=_raw_tree_sha256(files),
            detail_untrusted=shown(paths),
        )
    return files


@dataclass(frozen=True)
class Candidate:
    """The code to verify, as bytes: one file (`source`) or a folder (`tree`, relative POSIX
    path -> bytes). Build one with `from_path`, `from_text`, `from_bytes` or `from_files`.

    A folder is made canonical when the Candidate is made (a copy, checked by `canonical_tree`):
    a tree that is not canonical raises InvalidInput here, before anything is hashed."""

    source: bytes = b""
    label: str = "<source>"
    tree: Mapping[str, bytes] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if self.tree is not None:
            object.__setattr__(self, "tree", canonical_tree(self.tree, self.label))

    @property
    def kind(self) -> Literal["file", "tree"]:
        return "file" if self.tree is None else "tree"

    @property
    def sha256(self) -> str:
        """SHA-256 of the file's bytes (what `sha256sum` prints), or the folder's tree digest."""
        return sha256_bytes(self.source) if self.tree is None else tree_sha256(self.tree)

    def files(self, module: str) -> dict[str, bytes]:
        """The files the candidate process gets: a single file becomes `<module>.py`."""
        return {f"{module}.py": self.source} if self.tree is None else dict(self.tree)

    def modules(self, module: str) -> list[str]:
        """Every module of the candidate: `module` for a single file, every module of a folder."""
        return [module] if self.tree is None else module_names(list(self.tree))

    def importable(self, module: str, declared: Sequence[str]) -> list[str]:
        """The modules the tests may import (proxied on the trusted side, imported first in the
        candidate's process): `module` for a single file (the name it is imported as); for a
        folder, each `declared` module it has and the modules inside a declared package (sorted).
        The folder's other modules are importable from the candidate's own code only."""
        if self.tree is None:
            return [module]
        return [m for m in self.modules(module) if any(m == d or m.startswith(d + ".") for d in declared)]

    @classmethod
    def from_files(cls, files: Mapping[str, bytes | str], label: str = "<files>") -> Candidate:
        """A candidate folder from memory (canonical relative POSIX paths, see `canonical_tree`;
        str contents are UTF-8). Raises InvalidInput for a tree that is not canonical."""
        return cls(label=label, tree=canonical_tree(files, label))

    @classmethod
    def from_bytes(cls, data: bytes, label: str = "<source>") -> Candidate:
        return cls(source=bytes(data), label=label)

    @classmethod
    def from_text(cls, text: str, label: str = "<source>") -> Candidate:
        """The source as UTF-8. A lone surrogate is kept as the bytes it stands for, which
        `validate` then refuses as not UTF-8 (naming those bytes)."""
        return cls(source=text.encode("utf-8", "surrogatepass"), label=label)

    @classmethod
    def from_path(cls, path: Path | str) -> Candidate:
        """Read a candidate file or folder. Raises InvalidInput when it is missing or too big."""
        path = Path(path)
        if not path.exists():
            raise InvalidInput(f"candidate file {path} does not exist")
        if path.is_dir():
            return cls(label=str(path), tree=_read_tree(path))
        if not path.is_file():
            raise InvalidInput(f"candidate {path} is not a file or a folder")
        size = path.stat().st_size
        if size > MAX_CANDIDATE_BYTES:
            raise InvalidInput(
                f"candidate {path} is {size} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit",
                sha256=_file_sha256(path),
            )
        return cls(source=path.read_bytes(), label=str(path))

    @classmethod
    def coerce(cls, value: Path | Candidate | str | bytes) -> Candidate:
        """A Candidate from what `Verifier.check` accepts.

        `str` and `bytes` are source code; a `str` that looks like a file name is refused with
        a TypeError (pass `Path(...)` to verify a file, `Candidate.from_text(...)` to insist).
        """
        if isinstance(value, Candidate):
            return value
        if isinstance(value, Path):
            return cls.from_path(value)
        if isinstance(value, str):
            if _looks_like_a_path(value):
                raise TypeError(
                    f"the candidate {value[:80]!r} looks like a file name, but a str is read as source code: "
                    "pass Path(...) to verify a file, or Candidate.from_text(...) if it really is the source"
                )
            return cls.from_text(value)
        if isinstance(value, (bytes, bytearray)):
            return cls.from_bytes(bytes(value))
        raise TypeError(f"a candidate is a Path, a Candidate, or source as str/bytes, not {type(value).__name__}")

    def validate(self) -> Candidate:
        """This candidate, or InvalidInput (naming its bytes) when they cannot be verified."""
        if self.tree is not None:
            return self._validate_tree(self.tree)
        data, label = self.source, self.label

        def refuse(why: str) -> InvalidInput:
            return InvalidInput(f"candidate {label} {why}", sha256=self.sha256)

        if len(data) > MAX_CANDIDATE_BYTES:
            raise refuse(f"is {len(data)} bytes, over the {MAX_CANDIDATE_BYTES}-byte limit")
        if not data.strip():
            raise refuse("is empty")
        nul = data.find(b"\x00")
        if nul >= 0:
            raise refuse(f"contains a NUL byte at offset {nul}")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refuse(f"is not UTF-8 (bad byte at offset {exc.start})") from exc
        return self

    def _validate_tree(self, tree: Mapping[str, bytes]) -> Candidate:
        def refuse(why: str, detail: str = "") -> InvalidInput:
            return InvalidInput(f"candidate folder {self.label} {why}", sha256=self.sha256, detail_untrusted=detail)

        if len(tree) > MAX_TREE_FILES or sum(len(b) for b in tree.values()) > MAX_TREE_BYTES:
            raise refuse(f"is over the limit of {MAX_TREE_FILES} files and {MAX_TREE_BYTES // 1024**2} MiB")
        if not module_names(list(tree)):
            raise refuse("holds no Python module (no .py file with an importable name)")
        for path, data in sorted(tree.items()):
            if not path.endswith(".py"):
                continue
            if b"\x00" in data:
                raise refuse("has a NUL byte in a Python file", f"the file: {path}")
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise refuse(
                    f"has a Python file that is not UTF-8 (bad byte at offset {exc.start})", f"the file: {path}"
                ) from exc
        return self

    def syntax_error(self) -> tuple[str, str] | None:
        """(where, what) of the first syntax error, or None. Compiles, never runs.

        `where` ("line 3", "line 3 of a folder's module") is ours; `what` is the parser's message,
        which may quote the candidate (an encoding name, a character), so it is untrusted text, and
        so is the name of a folder's file, which the candidate chose: it leads `what`.
        """
        sources = {"": self.source} if self.tree is None else {p: b for p, b in self.tree.items() if p.endswith(".py")}
        for path, data in sorted(sources.items()):
            of_module = " of a folder's module" if path else ""
            named = f"{path}: " if path else ""
            try:
                compile(data, path or "solution.py", "exec", dont_inherit=True)
            except SyntaxError as exc:
                line = f"line {exc.lineno}" if isinstance(exc.lineno, int) else "an unknown line"
                return f"{line}{of_module}", f"{named}{exc.msg}"
            except (ValueError, RecursionError, MemoryError) as exc:
                what = f"the source cannot be compiled: {exc.__class__.__name__}"
                return f"the whole file{of_module}", f"{named}{what}"
        return None


def read_candidate(source: Path | Candidate | str | bytes) -> Candidate:
    """`Candidate.coerce(source).validate()`: a usable candidate, or InvalidInput."""
    return Candidate.coerce(source).validate()


def candidate_from(text: str | Mapping[str, str | bytes]) -> Candidate:
    """A candidate from source text, or from a folder held in memory (relative path -> content):
    what agent integrations read from an agent's state."""
    return Candidate.from_text(text) if isinstance(text, str) else Candidate.from_files(text, label="<files>")
