"""The review protocol: the one module both sides of `verifier review` import (standard library only).

The host (`verifier/review/`) imports it as `verifier.runner.review_protocol`; inside the
sandbox image the supervisor (`review_plugin.py`) imports it as `verifier_runner.review_protocol`.
Everything the two sides must agree on lives here: the command that starts the supervisor, the
paths it writes to, how a job is framed on its stdin, and the result line it answers with.

Job (host -> supervisor, on stdin)::

    {"version": 3, "nonce": ..., "tree_bytes": N, "budget_s": ..., "work_dir": ..., ...}\\n
    <N bytes: the tree, an uncompressed tar>

Result (supervisor -> host, on the stdout only the supervisor holds)::

    VERIFIER-REVIEW <nonce> {json}\\n

The header is a `ReviewHeader`: typed, versioned, and checked field by field when read, so a
host and an image of different versions fail with an error that says so, never with a job
misread. The result's JSON is built by the supervisor (`result_line`, with ``"protocol":
PROTOCOL``) and validated by the host's models (`verifier/review/supervisor_result.py`), since the
tests share the supervisor's container and its text is repository-controlled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import IO, Any

from .protocol import ProtocolError, read_exact

#: The version of both the header and the result; a header of any other version is refused.
PROTOCOL = 3
RESULT_PREFIX = "VERIFIER-REVIEW"
#: The supervisor's import name in the image.
MODULE = "verifier_runner.review_plugin"
COMMAND = ("python3", "-I", "-B", "-m", MODULE, "supervise")
#: Where the supervisor writes the tree (a scratch copy per run) and the project's metadata.
WORK_DIR = "/tmp/work"
SITE_DIR = "/tmp/site"
MAX_HEADER_BYTES = 1 << 20


@dataclass(frozen=True)
class ReviewProject:
    """The project under test, as its `.dist-info` names it (empty name: none is written)."""

    name: str = ""
    version: str = ""
    entry_points: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewHeader:
    """The first line of a review job: what the supervisor needs besides the tree."""

    nonce: str
    tree_bytes: int
    #: The supervisor's own deadline, from when it read the header.
    budget_s: float
    pythonpath: tuple[str, ...]
    hypothesis: bool
    rerun: bool = True
    #: Options for every pytest session (the configuration pinned, then the user's --pytest-args).
    pytest_args: tuple[str, ...] = ()
    #: Tree paths (test files or folders) the first session runs; empty: pytest's own choice.
    select: tuple[str, ...] = ()
    project: ReviewProject = field(default_factory=ReviewProject)
    work_dir: str = WORK_DIR
    site_dir: str = SITE_DIR
    version: int = PROTOCOL

    def __post_init__(self) -> None:
        _check_header(self)

    def to_json(self) -> bytes:
        """The header line, without its newline."""
        data = {"version": self.version} | {f.name: getattr(self, f.name) for f in fields(self)}
        for name in _LISTS:
            data[name] = list(getattr(self, name))
        data["project"] = {f.name: getattr(self.project, f.name) for f in fields(self.project)}
        return json.dumps(data).encode()

    @classmethod
    def from_json(cls, line: bytes | str) -> ReviewHeader:
        """The header in `line`; ProtocolError naming what is wrong (version first)."""
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise ProtocolError(f"review header is not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise ProtocolError("review header is not a JSON object")
        version = raw.get("version")
        if version != PROTOCOL:
            raise ProtocolError(
                f"review header version {version!r}, expected {PROTOCOL}"
                " (the host and the sandbox image come from different verifier versions)"
            )
        _known(raw, cls, "review header")
        project = raw.get("project", {})
        if not isinstance(project, dict):
            raise ProtocolError("review header: project must be an object")
        _known(project, ReviewProject, "review header project")
        lists = {name: raw[name] for name in _LISTS if name in raw}
        for name, value in lists.items():
            if not isinstance(value, list):
                raise ProtocolError(f"review header: {name} must be a list")
        try:
            return cls(**{**raw, **{k: tuple(v) for k, v in lists.items()}, "project": ReviewProject(**project)})
        except TypeError as exc:  # a required field is missing
            raise ProtocolError(f"review header: {exc}") from None


#: The header's fields that are lists of strings (tuples in the dataclass).
_LISTS = ("pythonpath", "pytest_args", "select")


def _known(raw: dict[str, Any], cls: type, what: str) -> None:
    unknown = sorted(set(raw) - {f.name for f in fields(cls)})
    if unknown:
        raise ProtocolError(f"{what}: unknown fields {unknown}")


def _want(ok: bool, what: str) -> None:
    if not ok:
        raise ProtocolError(f"review header: {what}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith(("/", "-")) and ".." not in parts


def _check_header(h: ReviewHeader) -> None:
    _want(h.version == PROTOCOL, f"version {h.version!r}, expected {PROTOCOL}")
    _want(isinstance(h.nonce, str) and h.nonce.isalnum(), "nonce must be a non-empty alphanumeric string")
    _want(_is_int(h.tree_bytes) and h.tree_bytes >= 0, "tree_bytes must be an integer >= 0")
    _want(_is_int(h.budget_s) or isinstance(h.budget_s, float), "budget_s must be a number")
    _want(h.budget_s > 0, "budget_s must be > 0")
    for name in _LISTS:
        value = getattr(h, name)
        _want(isinstance(value, tuple) and all(isinstance(p, str) for p in value), f"{name}: strings")
    _want(isinstance(h.hypothesis, bool) and isinstance(h.rerun, bool), "hypothesis and rerun must be booleans")
    _want(
        isinstance(h.select, tuple) and all(isinstance(p, str) and _relative(p) for p in h.select),
        "select: relative tree paths without '..' or a leading '-'",
    )
    for name in ("work_dir", "site_dir"):
        path = getattr(h, name)
        _want(isinstance(path, str) and path.startswith("/") and ".." not in path.split("/"), f"{name}: absolute")
    p = h.project
    _want(isinstance(p, ReviewProject), "project must be a ReviewProject")
    _want(isinstance(p.name, str) and isinstance(p.version, str), "project name and version must be strings")
    _want(
        isinstance(p.entry_points, dict)
        and all(
            isinstance(group, str)
            and isinstance(entries, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items())
            for group, entries in p.entry_points.items()
        ),
        "project entry_points must map group -> {name: target}",
    )


def encode_job(header: ReviewHeader, tree: bytes) -> bytes:
    """A job on the supervisor's stdin: the header line, then the tree."""
    if header.tree_bytes != len(tree):
        raise ValueError(f"header says {header.tree_bytes} tree bytes, the tree has {len(tree)}")
    return header.to_json() + b"\n" + tree


def read_job(stream: IO[bytes]) -> tuple[ReviewHeader, bytes]:
    """The job on `stream`: its header and its tree. ProtocolError if either is malformed."""
    header = ReviewHeader.from_json(stream.readline(MAX_HEADER_BYTES))
    try:
        return header, read_exact(stream.read, header.tree_bytes)
    except EOFError as exc:
        raise ProtocolError(f"review tree: {exc}") from None


def result_line(nonce: str, result: dict[str, Any]) -> bytes:
    """The supervisor's one answer: `result` (the fields of the host's `SupervisorResult` but
    its version) under this protocol's version. A leading newline ends any partial line the tests left on
    the container's stdout."""
    return f"\n{RESULT_PREFIX} {nonce} {json.dumps({'protocol': PROTOCOL, **result})}\n".encode()


def find_result(stdout: bytes, nonce: str) -> bytes | None:
    """The JSON of the last result line bound to `nonce` in `stdout`, or None.

    The token is searched anywhere, not only at a line start: the tests can write to the
    container's stdout too (not knowing the nonce, they cannot forge a result), and a partial
    line of theirs must not hide the real one.
    """
    token = f"{RESULT_PREFIX} {nonce} ".encode()
    start = stdout.rfind(token)
    if start < 0:
        return None
    end = stdout.find(b"\n", start)
    return stdout[start + len(token) : end if end >= 0 else len(stdout)]
