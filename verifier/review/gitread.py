"""Read a git repository's trees without touching it: object reads in, bytes out.

Only `git rev-parse`, `git ls-tree` and `git cat-file` run against the repository: its
working tree, index, refs and object store are never written. A `--patch` is applied by
`git apply` in a private temporary directory outside any repository. Tree ids of trees that
exist only in memory (base + patch, or base code + head tests) are computed here with git's
own object format, so evidence names every tree by the id git would give it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from verifier.errors import InvalidInput

#: Most bytes of one tree read into memory (and sent into the sandbox).
MAX_TREE_BYTES = 512 * 1024**2
MAX_PATCH_BYTES = 16 * 1024**2
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"
#: Most bytes the binary hunks of a patch may declare, all together (`git apply` inflates every
#: hunk, the reverse ones too, and every delta's result, into memory before it writes anything).
MAX_PATCH_INFLATED_BYTES = 256 * 1024**2
_GIT_TIMEOUT_S = 120
#: Runs a command with its files' size (RLIMIT_FSIZE) and its address space (RLIMIT_AS) limited,
#: set in the child before exec: git itself cannot grow past the memory limit.
_LIMITED = (
    "import os, resource, sys; n, m = int(sys.argv[1]), int(sys.argv[2]);"
    " resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); resource.setrlimit(resource.RLIMIT_AS, (m, m));"
    " os.execvp(sys.argv[3], sys.argv[3:])"
)
_BINARY_HUNK = re.compile(rb"(literal|delta) ([0-9]+)\r?")
#: git's base85 line: its first character is the line's decoded length (A-Z: 1-26, a-z: 27-52).
_B85_LENGTH = {c: i + 1 for i, c in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")}


@dataclass(frozen=True)
class Entry:
    """One file of a tree: its git mode (file, executable or symlink) and its bytes."""

    mode: str
    data: bytes


Files = dict[str, Entry]


@dataclass(frozen=True)
class Snapshot:
    """A tree as the review reads it: where it came from, its id, its files."""

    ref: str
    commit: str | None
    tree_id: str
    files: Files
    skipped_submodules: tuple[str, ...] = ()


def _git_env() -> dict[str, str]:
    # Nothing of the caller's GIT_* environment (GIT_DIR, GIT_INDEX_FILE...) may redirect us.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    return env


def _first_line(text: bytes | str) -> str:
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    lines = [ln.strip() for ln in s.splitlines() if ln.strip()]
    return lines[0] if lines else "no message"


class GitRepo:
    """Read-only access to one repository's objects."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise InvalidInput(f"{path} does not exist")
        if not path.is_dir():
            raise InvalidInput(f"{path} is not a directory")
        self.path = path
        done = self._git(["rev-parse", "--git-dir"], check=False)
        if done.returncode != 0:
            raise InvalidInput(f"{path} is not a git repository ({_first_line(done.stderr)})")
        fmt = self._git(["rev-parse", "--show-object-format"], check=False)
        self.object_format = fmt.stdout.decode().strip() if fmt.returncode == 0 and fmt.stdout.strip() else "sha1"

    def _git(
        self, args: list[str], *, check: bool = True, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.path), *args],
                input=stdin,
                capture_output=True,
                env=_git_env(),
                timeout=_GIT_TIMEOUT_S,
            )
        except FileNotFoundError as exc:
            raise InvalidInput("git is not installed") from exc
        if check and done.returncode != 0:
            raise InvalidInput(f"git {args[0]} failed: {_first_line(done.stderr)}")
        return done

    def resolve(self, ref: str) -> tuple[str, str]:
        """(commit id, tree id) of `ref`; InvalidInput naming the ref when it is unknown."""
        if not ref or "\n" in ref or "\0" in ref:
            raise InvalidInput(f"unknown ref {ref!r}")
        done = self._git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], check=False)
        if done.returncode != 0:
            raise InvalidInput(f"unknown ref {ref!r} in {self.path}")
        commit = done.stdout.decode().strip()
        tree = self._git(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"]).stdout.decode().strip()
        return commit, tree

    def remote_uri(self) -> str:
        """Where the repository lives, for reports: its origin remote without credentials, else
        its folder's file:// URI."""
        done = self._git(["config", "--get", "remote.origin.url"], check=False)
        url = public_uri(done.stdout.decode("utf-8", "replace").strip()) if done.returncode == 0 else None
        return url or self.path.resolve().as_uri()

    def snapshot(self, ref: str) -> Snapshot:
        commit, tree = self.resolve(ref)
        files, submodules = self.read_tree(tree)
        return Snapshot(ref=ref, commit=commit, tree_id=tree, files=files, skipped_submodules=submodules)

    def read_tree(self, tree: str) -> tuple[Files, tuple[str, ...]]:
        """Every file and symlink of `tree` (recursively) with its bytes; submodules are listed apart.

        The sizes come first (`git ls-tree -l`): a tree over `MAX_TREE_BYTES` is refused before
        any blob is read, however small git stores it (a file of zeros compresses a thousandfold).
        """
        listing = self._git(["ls-tree", "-r", "-z", "-l", "--full-tree", tree]).stdout
        wanted: list[tuple[str, str, str]] = []
        submodules: list[str] = []
        total = 0
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, oid, size = meta.decode().split()
            # Names are bytes in git: one that is not UTF-8 keeps them (surrogateescape), and is
            # shown quoted in the evidence (verifier.text.shown_name).
            path = raw_path.decode("utf-8", "surrogateescape")
            if kind == "commit":
                submodules.append(path)
            elif kind == "blob":
                wanted.append((path, mode, oid))
                total += int(size)
                if total > MAX_TREE_BYTES:
                    raise InvalidInput(f"the tree is larger than {MAX_TREE_BYTES // 1024**2} MiB")
        blobs = self._read_blobs(sorted({oid for _, _, oid in wanted}))
        files = {path: Entry(mode=_normal_mode(mode), data=blobs[oid]) for path, mode, oid in wanted}
        return files, tuple(submodules)

    def _read_blobs(self, oids: list[str]) -> dict[str, bytes]:
        if not oids:
            return {}
        out = self._git(["cat-file", "--batch"], stdin=("\n".join(oids) + "\n").encode()).stdout
        blobs: dict[str, bytes] = {}
        pos = 0
        for oid in oids:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            if len(header) != 3 or header[0] != oid:
                raise InvalidInput(f"git cat-file returned an unexpected header for {oid}")
            size = int(header[2])
            blobs[oid] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return blobs


def public_uri(url: str) -> str | None:
    """A remote's URL as an absolute URI without user or password (a token in an https URL stays
    out of every report); scp-like ``git@host:org/repo`` becomes ``ssh://host/org/repo``."""
    scp = re.fullmatch(r"(?:[^@/:]+@)?([A-Za-z0-9.-]+):(?!//)([^\s]+)", url)
    if scp is not None:
        return f"ssh://{scp.group(1)}/{scp.group(2).lstrip('/')}"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https", "ssh", "git") and parts.hostname:
        netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    if url.startswith("/"):
        return Path(url).as_uri()
    return None


def _normal_mode(mode: str) -> str:
    return mode if mode in (MODE_EXEC, MODE_LINK) else MODE_FILE


def read_patch(path: Path) -> bytes:
    """The patch file's bytes, or InvalidInput (missing, empty, too large)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read the patch {path}: {exc.strerror or exc}") from exc
    if not data.strip():
        raise InvalidInput(f"the patch {path} is empty")
    if len(data) > MAX_PATCH_BYTES:
        raise InvalidInput(f"the patch {path} is larger than {MAX_PATCH_BYTES // 1024**2} MiB")
    return data


def _git_memory(max_inflated: int) -> int:
    """The address space `git apply` gets: the patch, its inflated hunks, and each file's image."""
    return MAX_PATCH_BYTES + 2 * max_inflated + 256 * 1024**2


def _delta_result_size(lines: list[bytes], start: int) -> int:
    """The result size a binary delta's header declares (its second varint), read from the first
    bytes of its data lines: only a few lines are decoded and at most 32 bytes inflated."""
    raw = bytearray()
    for line in lines[start : start + 4]:
        line = line.rstrip(b"\r")
        if not line or line[0] not in _B85_LENGTH:
            break
        try:
            raw += base64.b85decode(line[1:])[: _B85_LENGTH[line[0]]]
        except ValueError as exc:
            raise InvalidInput("the patch has a malformed binary hunk") from exc
    try:
        head = zlib.decompressobj().decompress(bytes(raw), 32)
    except zlib.error as exc:
        raise InvalidInput("the patch has a malformed binary hunk") from exc
    sizes, value, shift = [], 0, 0
    for byte in head:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            sizes.append(value)
            value, shift = 0, 0
            if len(sizes) == 2:
                return sizes[1]
        elif shift > 63:
            break
    raise InvalidInput("the patch has a malformed binary hunk (its delta's header cannot be read)")


def declared_inflated_bytes(patch: bytes) -> int:
    """What the patch's binary hunks make `git apply` hold, as they declare it: each `literal N`
    and `delta N` hunk's N (forward and reverse: git inflates both) and each delta's result size.
    Read from the patch text only; nothing is inflated past a delta's header."""
    lines = patch.split(b"\n")
    total = 0
    for i, line in enumerate(lines):
        found = _BINARY_HUNK.fullmatch(line)
        if found is None:
            continue
        if len(found[2]) > 19:
            raise InvalidInput("the patch has a binary hunk of an impossible size")
        total += int(found[2])
        if found[1] == b"delta":
            total += _delta_result_size(lines, i + 1)
    return total


def apply_patch(files: Mapping[str, Entry], patch: bytes, max_inflated: int | None = None) -> Files:
    """`files` with the unified diff `patch` applied (by `git apply`, outside any repository).

    The sizes the patch's binary hunks declare are summed first (`declared_inflated_bytes`); over
    `max_inflated` (default `MAX_PATCH_INFLATED_BYTES`) is refused before git runs. git then runs
    with its file sizes limited to `MAX_TREE_BYTES` and its memory to `_git_memory`."""
    budget = MAX_PATCH_INFLATED_BYTES if max_inflated is None else max_inflated
    declared = declared_inflated_bytes(patch)
    if declared > budget:
        raise InvalidInput(
            f"the patch's binary hunks declare {declared // 1024**2} MiB, more than {budget // 1024**2} MiB"
        )
    memory = _git_memory(budget)
    with tempfile.TemporaryDirectory(prefix="verifier-review-patch-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        write_files(files, root)
        env = _git_env()
        env["GIT_CEILING_DIRECTORIES"] = tmp  # never discover a repository above the scratch tree
        patch_path = Path(tmp) / "change.patch"
        patch_path.write_bytes(patch)
        # Under a file-size limit: a binary patch of a few KiB can inflate to gigabytes of disk.
        apply = ["git", "apply", "--whitespace=nowarn", str(patch_path)]
        done = subprocess.run(
            [sys.executable, "-I", "-c", _LIMITED, str(MAX_TREE_BYTES), str(memory), *apply],
            cwd=root,
            capture_output=True,
            env=env,
            timeout=_GIT_TIMEOUT_S,
        )
        if done.returncode == -signal.SIGXFSZ or b"File too large" in done.stderr:  # EFBIG, LC_ALL=C
            raise InvalidInput(f"the patch makes a file larger than {MAX_TREE_BYTES // 1024**2} MiB")
        if b"Out of memory" in done.stderr or b"Cannot allocate memory" in done.stderr:
            raise InvalidInput(f"the patch needs more than {memory // 1024**2} MiB of memory to apply")
        if done.returncode != 0:
            raise InvalidInput(f"the patch does not apply: {_first_line(done.stderr)}")
        return read_files(root)


def write_files(files: Mapping[str, Entry], root: Path) -> None:
    for path, entry in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.mode == MODE_LINK:
            os.symlink(os.fsdecode(entry.data), target)
        else:
            target.write_bytes(entry.data)
            target.chmod(0o755 if entry.mode == MODE_EXEC else 0o644)


def read_files(root: Path) -> Files:
    """The files under `root`, sizes checked (`lstat`) before any is read: over `MAX_TREE_BYTES`
    is InvalidInput."""
    found: list[tuple[str, Path, os.stat_result]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
                if total > MAX_TREE_BYTES:
                    raise InvalidInput(f"the tree is larger than {MAX_TREE_BYTES // 1024**2} MiB")
            found.append((path.relative_to(root).as_posix(), path, st))
    files: Files = {}
    for rel, path, st in found:
        if stat.S_ISLNK(st.st_mode):
            files[rel] = Entry(MODE_LINK, os.fsencode(os.readlink(path)))
        elif stat.S_ISREG(st.st_mode):
            files[rel] = Entry(MODE_EXEC if st.st_mode & 0o100 else MODE_FILE, path.read_bytes())
    return files


def tree_id(files: Mapping[str, Entry], object_format: str = "sha1") -> str:
    """The id git gives the tree holding exactly `files` (without writing any object)."""

    def digest(kind: bytes, body: bytes) -> bytes:
        h = hashlib.new("sha256" if object_format == "sha256" else "sha1")
        h.update(kind + b" " + str(len(body)).encode() + b"\0" + body)
        return h.digest()

    def build(prefix: str, paths: list[str]) -> bytes:
        entries: list[tuple[bytes, bytes, bytes]] = []  # (sort key, mode, oid)
        children: dict[str, list[str]] = {}
        for path in paths:
            head, sep, _rest = path[len(prefix) :].partition("/")
            if sep:
                children.setdefault(head, []).append(path)
            else:
                entry = files[path]
                raw = head.encode("utf-8", "surrogateescape")
                entries.append((raw, entry.mode.encode(), digest(b"blob", entry.data)))
        for child, sub in children.items():
            raw = child.encode("utf-8", "surrogateescape")
            entries.append((raw + b"/", b"40000", build(prefix + child + "/", sub)))
        body = b"".join(
            mode + b" " + (key[:-1] if key.endswith(b"/") else key) + b"\0" + oid for key, mode, oid in sorted(entries)
        )
        return digest(b"tree", body)

    return build("", sorted(files)).hex()


def to_tar(files: Mapping[str, Entry]) -> bytes:
    """An uncompressed, deterministic tar of `files` (what the sandbox unpacks)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            entry = files[path]
            info = tarfile.TarInfo(path)
            info.mtime = 0
            info.uid = info.gid = 0
            if entry.mode == MODE_LINK:
                info.type = tarfile.SYMTYPE
                info.linkname = os.fsdecode(entry.data)
                tar.addfile(info)
            else:
                info.size = len(entry.data)
                info.mode = 0o755 if entry.mode == MODE_EXEC else 0o644
                tar.addfile(info, io.BytesIO(entry.data))
    return buf.getvalue()
