"""Files in and out of an agent's sandbox: where a path may point, and the small programs that
move the bytes inside the container (over an exec's stdin and stdout).

Confinement happens twice. On the host, `confine` judges the path as text: relative paths are
taken from the workspace, `..` is refused (`invalid_path`), and the path must lie under one of
the sandbox's writable roots (else `permission_denied`). In the container, the programs open
the file and then ask the kernel where the descriptor really points (`/proc/self/fd`), so a
symlink that leaves the roots is refused (`permission_denied`) without a race between the
check and the use. The roots are the workspace and the scratch `/tmp` (Deep Agents' own
large-edit helper puts its temporary files there); everything else is read-only anyway.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deepagents.backends.protocol import FILE_NOT_FOUND, INVALID_PATH, IS_DIRECTORY, PERMISSION_DENIED

#: Python in the sandbox image, isolated from the environment, the user site and the working
#: directory, so files the agent wrote (a `json.py` in the workspace) cannot stand in for ours.
PYTHON = ("python3", "-I", "-S", "-c")

_COMMON = r"""
import errno, json, os, stat, sys
roots = json.loads(sys.argv[1])
def inside(real):
    return any(real == r or real.startswith(r + '/') for r in roots)
def where(fd):
    return os.readlink('/proc/self/fd/%d' % fd)
def code(exc):
    e = exc.errno
    if e in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ELOOP): return 'permission_denied'
    if e == errno.EISDIR: return 'is_directory'
    if e == errno.ENOENT: return 'file_not_found'
    if e in (errno.ENOTDIR, errno.ENAMETOOLONG, errno.EEXIST, errno.EINVAL, errno.ENXIO): return 'invalid_path'
    if e == errno.ENOSPC: return 'no_space'
    if e == errno.EFBIG: return 'too_large'
    return 'os_error ' + errno.errorcode.get(e, str(e))
"""

#: Writes files as the agent's user. stdin: per file a JSON line {"i", "path", "size"} and
#: `size` bytes; stdout: per file a JSON line {"i", "error"}.
UPLOAD = (
    _COMMON
    + r"""
src = sys.stdin.buffer
def put(path, data):
    parent, name = os.path.split(path)
    probe = parent
    while not os.path.lexists(probe):
        probe = os.path.dirname(probe)
    if not inside(os.path.realpath(probe)):
        return 'permission_denied'
    os.makedirs(parent, exist_ok=True)
    dfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if not inside(where(dfd)):
            return 'permission_denied'
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(name, flags, 0o644, dir_fd=dfd)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            real = os.path.realpath(path)  # a symlink: followed only when it stays inside
            if not inside(real):
                return 'permission_denied'
            fd = os.open(real, flags, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return 'invalid_path'
            if not inside(where(fd)):
                return 'permission_denied'
            os.ftruncate(fd, 0)
            with os.fdopen(fd, 'wb', closefd=False) as fh:
                fh.write(data)
        finally:
            os.close(fd)
    finally:
        os.close(dfd)
    return None
while True:
    line = src.readline()
    if not line:
        break
    head = json.loads(line)
    data = src.read(head['size'])
    try:
        error = put(head['path'], data)
    except OSError as exc:
        error = code(exc)
    print(json.dumps({'i': head['i'], 'error': error}), flush=True)
"""
)

#: Reads files as a user the agent cannot signal or trace. argv[2]: the size limit; stdin: a
#: JSON list of paths; stdout: per path a JSON line {"i", "error"?, "size"} then `size` bytes.
DOWNLOAD = (
    _COMMON
    + r"""
limit = int(sys.argv[2])
out = sys.stdout.buffer
def get(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return code(exc), 0, b''
    try:
        if not inside(where(fd)):
            return 'permission_denied', 0, b''
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return 'is_directory', 0, b''
        if not stat.S_ISREG(st.st_mode):
            return 'invalid_path', 0, b''
        if st.st_size > limit:
            return 'too_large', st.st_size, b''
        with os.fdopen(fd, 'rb', closefd=False) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            return 'too_large', len(data), b''
        return None, len(data), data
    except OSError as exc:
        return code(exc), 0, b''
    finally:
        os.close(fd)
for i, path in enumerate(json.loads(sys.stdin.buffer.read())):
    error, size, data = get(path)
    out.write(json.dumps({'i': i, 'error': error, 'size': size}).encode() + b'\n' + data)
    out.flush()
"""
)


#: Reads every file under a folder, as DOWNLOAD's user. argv[2]: the folder; argv[3], argv[4]:
#: most files and bytes; argv[5]: JSON list of directory names to skip. stdout: per file a JSON
#: line {"path" (relative), "size"} and `size` bytes, then {"end": true}; or one {"error", "path"}
#: line (`symlink`: the folder holds one; `too_big`: over a limit).
FOLDER = (
    _COMMON
    + r"""
top, most_files, most_bytes, skip = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), set(json.loads(sys.argv[5]))
out = sys.stdout.buffer
def say(record, data=b''):
    out.write(json.dumps(record).encode() + b'\n' + data)
def walk():
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        return {'error': code(exc), 'path': ''}
    try:
        root = where(fd)
    finally:
        os.close(fd)
    if not inside(root):
        return {'error': 'permission_denied', 'path': ''}
    files, total, failed = [], 0, []
    for folder, dirs, names in os.walk(root, onerror=failed.append):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(dirs) + sorted(names):
            full = os.path.join(folder, name)
            if os.path.islink(full):
                return {'error': 'symlink', 'path': os.path.relpath(full, root)}
        for name in sorted(names):
            if name.endswith('.pyc'):
                continue
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            except OSError as exc:
                return {'error': code(exc), 'path': rel}
            try:
                if not inside(where(fd)) or not stat.S_ISREG(os.fstat(fd).st_mode):
                    return {'error': 'invalid_path', 'path': rel}
                with os.fdopen(fd, 'rb', closefd=False) as fh:
                    data = fh.read(most_bytes - total + 1)
            finally:
                os.close(fd)
            total += len(data)
            files.append((rel, data))
            if len(files) > most_files or total > most_bytes:
                return {'error': 'too_big', 'path': rel}
    if failed:
        return {'error': code(failed[0]), 'path': os.path.relpath(failed[0].filename or root, root)}
    for rel, data in files:
        say({'path': rel, 'size': len(data)}, data)
    return {'end': True}
say(walk())
"""
)


@dataclass(frozen=True)
class Place:
    """Where a path may point: the workspace (relative paths start there) and the writable roots."""

    workspace: str
    roots: tuple[str, ...]

    def confine(self, path: object) -> tuple[str, None] | tuple[None, str]:
        """(normalised absolute path, None) or (None, the protocol's error code)."""
        if not isinstance(path, str) or not path or "\x00" in path:
            return None, INVALID_PATH
        full = path if path.startswith("/") else f"{self.workspace}/{path}"
        if ".." in full.split("/"):
            return None, INVALID_PATH
        norm = "/" + posixpath.normpath(full).lstrip("/")
        if not any(norm == root or norm.startswith(root + "/") for root in self.roots):
            return None, PERMISSION_DENIED
        if norm in self.roots or path.endswith("/"):
            return None, IS_DIRECTORY
        return norm, None

    def confine_folder(self, path: object) -> tuple[str, None] | tuple[None, str]:
        """`confine` for a folder: a trailing slash and a root itself are fine."""
        if isinstance(path, str) and path.rstrip("/") in self.roots:
            return path.rstrip("/"), None
        return self.confine(path.rstrip("/") if isinstance(path, str) and path.strip("/") else path)


def upload_stream(files: Sequence[tuple[int, str, bytes]]) -> bytes:
    """The UPLOAD program's stdin for (index, confined path, content) triples."""
    parts: list[bytes] = []
    for index, path, data in files:
        parts.append(json.dumps({"i": index, "path": path, "size": len(data)}).encode() + b"\n")
        parts.append(data)
    return b"".join(parts)


def upload_results(stdout: bytes) -> dict[int, str | None]:
    """Index -> error code (None for written) from the UPLOAD program's output."""
    results: dict[int, str | None] = {}
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
            results[int(record["i"])] = None if record["error"] is None else str(record["error"])
        except (ValueError, KeyError, TypeError):
            continue
    return results


def _header(stdout: bytes, at: int) -> tuple[dict[str, Any], int] | None:
    """The JSON header line of the record at `at` and where the record's content starts; None
    when the line is cut short or is not a JSON object (the DOWNLOAD and FOLDER programs' framing)."""
    end = stdout.find(b"\n", at)
    if end < 0:
        return None
    try:
        record = json.loads(stdout[at:end])
    except ValueError:
        return None
    return (record, end + 1) if isinstance(record, dict) else None


def download_results(stdout: bytes) -> dict[int, tuple[str | None, int, bytes]]:
    """Index -> (error code or None, size, content) from the DOWNLOAD program's output.
    A record cut short is left out (the caller reports it as not read)."""
    results: dict[int, tuple[str | None, int, bytes]] = {}
    at = 0
    while at < len(stdout) and (header := _header(stdout, at)) is not None:
        record, body = header
        try:
            index, size = int(record["i"]), int(record["size"])
            error = None if record["error"] is None else str(record["error"])
        except (ValueError, KeyError, TypeError):
            break
        data = b"" if error is not None else stdout[body : body + size]
        if len(data) != (0 if error is not None else size):
            break
        results[index] = (error, size, data)
        at = body + len(data)
    return results


def folder_results(stdout: bytes) -> tuple[dict[str, bytes], dict[str, str] | None]:
    """(relative path -> bytes, None) from the FOLDER program's output, or (partial, the error
    record); output that does not end with its end record is an error too."""
    files: dict[str, bytes] = {}
    at = 0
    while at < len(stdout) and (header := _header(stdout, at)) is not None:
        record, body = header
        if "error" in record:
            return files, {"error": str(record["error"]), "path": str(record.get("path", ""))}
        if record.get("end") is True:
            return files, None
        try:
            path, size = str(record["path"]), int(record["size"])
        except (KeyError, TypeError, ValueError):
            break
        files[path] = stdout[body : body + size]
        at = body + size
    return files, {"error": "cut", "path": ""}


def describe(code: str, *, size: int, limit: int, workspace_bytes: int) -> str:
    """The error value for a response: the protocol's own codes as they are, ours spelt out."""
    if code in (FILE_NOT_FOUND, PERMISSION_DENIED, IS_DIRECTORY, INVALID_PATH):
        return code
    if code == "too_large":
        return f"file too large: {size} bytes, the sandbox's limit is {limit} bytes"
    if code == "no_space":
        return f"no space left: the sandbox's workspace holds {workspace_bytes} bytes"
    return f"the sandbox could not transfer the file: {code}"
