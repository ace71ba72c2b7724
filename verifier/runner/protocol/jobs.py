"""Job framing (host -> runner, on stdin): the header, the candidate's and the suite's files."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, is_dataclass
from typing import IO, Any

from .constants import (
    DEFAULT_CANDIDATE_PROCESS,
    DEFAULT_KIND,
    DEFAULT_RUNNER,
    DEFAULT_TRUSTED_PROCESS,
    PROTOCOL_VERSION,
)
from .strings import ProtocolError


# -- jobs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProgramConfig:
    """How a program job runs and judges its cases (suite.toml's [program] table)."""

    #: A folder of NAME.in + NAME.out files in the suite, or a .jsonl file of cases.
    cases: str = "cases"
    compare: str = "tokens"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    #: The suite file that defines check(input, output, expected), for compare "checker".
    checker: str | None = None
    #: Charged time one case may take, from the fork to the program's exit.
    time_limit_s: float = 2.0
    #: Peak resident memory one case's program may reach.
    memory_bytes: int = 256 * 1024**2
    #: The program's language (languages.LANGUAGES); a compiled one is compiled before the first case.
    language: str = "python"
    #: Charged time the compile step may take, and the peak memory of any of its processes.
    compile_timeout_s: float = 10.0
    compile_memory_bytes: int = 256 * 1024**2
    #: compare = "none" only: paths (relative to the candidate's folder, the program's working
    #: folder) of files the trusted side reads after the last case, before the candidate side is
    #: reset, and sends back in that case's record (`records.FetchedRecord`, `reset.fetch`).
    fetch_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.fetch_files, tuple):  # as read back from a job header's JSON (a list)
            object.__setattr__(self, "fetch_files", tuple(self.fetch_files))


@dataclass(frozen=True)
class JobConfig:
    budget_s: float
    call_timeout_s: float
    output_bytes: int
    #: Most bytes of one reply from the candidate process; a bigger one is an output_limit fault.
    reply_bytes: int
    max_examples: int = 100
    runner: str = DEFAULT_RUNNER
    uses_hypothesis: bool = True
    candidate_process: str = DEFAULT_CANDIDATE_PROCESS
    trusted_process: str = DEFAULT_TRUSTED_PROCESS
    #: "tests" or "program" (KINDS); a program job carries its ProgramConfig.
    kind: str = DEFAULT_KIND
    program: ProgramConfig | None = None
    #: Whether the runner tells the host its progress (`format_progress_line`) as tests end.
    progress: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.program, dict):  # as read back from a job header's JSON
            object.__setattr__(self, "program", ProgramConfig(**self.program))


@dataclass(frozen=True)
class JobHeader:
    nonce: str
    modules: list[str]
    candidate_bytes: int
    suite_bytes: int
    config: JobConfig
    version: int = PROTOCOL_VERSION


def plain(value: Any) -> Any:
    """A protocol dataclass as JSON-ready data: `dataclasses.asdict` without its deep copies
    (a job header and a result are built once and only read; this is on every job's path)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: plain(item) for name, item in vars(value).items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def tree(files: dict[str, bytes]) -> bytes:
    return json.dumps({"files": {p: base64.b64encode(b).decode() for p, b in sorted(files.items())}}).encode()


def untree(data: bytes) -> dict[str, bytes]:
    files = {}
    for rel, b64 in json.loads(data)["files"].items():
        if not rel or rel.startswith("/") or ".." in rel.split("/") or "\x00" in rel:
            raise ProtocolError(f"refusing path {rel!r}")
        files[rel] = base64.b64decode(b64)
    return files


def module_names(paths: list[str]) -> list[str]:
    """The importable modules of a tree of files: a/b.py -> a.b, a/__init__.py -> a (sorted)."""
    names = set()
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            names.add(".".join(parts))
    return sorted(names)


def encode_job(
    nonce: str, modules: list[str], candidate: dict[str, bytes], suite_files: dict[str, bytes], config: JobConfig
) -> bytes:
    cand, suite = tree(candidate), tree(suite_files)
    header = JobHeader(nonce=nonce, modules=modules, candidate_bytes=len(cand), suite_bytes=len(suite), config=config)
    return json.dumps(plain(header)).encode() + b"\n" + cand + suite


def read_exact(read: Callable[[int], bytes], n: int) -> bytes:
    """Exactly `n` bytes from `read` (a stream's read or a socket's recv); EOFError if it ends
    first. The one such loop: stdin here and in review_protocol.py, frames in wire.py, Docker's
    attach stream on the host."""
    buf = bytearray()
    while len(buf) < n:
        chunk = read(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError(f"input ended after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def read_job(stream: IO[bytes]) -> tuple[JobHeader, dict[str, bytes], dict[str, bytes]] | None:
    """The next job on `stream` (header, candidate files, suite files), or None at end of input."""
    line = stream.readline()
    if not line:
        return None
    try:
        raw = json.loads(line)
        if raw.get("version") != PROTOCOL_VERSION:
            raise ProtocolError(f"job protocol version {raw.get('version')!r}, runner speaks {PROTOCOL_VERSION}")
        header = JobHeader(**{**raw, "config": JobConfig(**raw["config"])})
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ProtocolError(f"malformed job header: {exc}") from None
    if not header.modules or not all(all(p.isidentifier() for p in m.split(".")) for m in header.modules):
        raise ProtocolError("malformed job header: modules")
    try:
        candidate = untree(read_exact(stream.read, header.candidate_bytes))
        suite = untree(read_exact(stream.read, header.suite_bytes))
    except EOFError as exc:
        raise ProtocolError(str(exc)) from None
    return header, candidate, suite
