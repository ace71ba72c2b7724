"""The host-runner protocol: the one module both sides import (standard library only).

The host imports it as `verifier.runner.protocol`; inside the sandbox image it is
`verifier_runner.protocol`. Everything the two sides must agree on lives here: user ids and
paths in the container, the command that starts the runner, how a job is framed on the
runner's stdin, and how its result comes back as one line on the runner's stdout.

Job (host -> runner, on stdin)::

    {"nonce": ..., "modules": [...], "candidate_bytes": N, "suite_bytes": M, "config": {...},
     "version": PROTOCOL_VERSION}\\n                                       (a `JobHeader`)
    <N bytes: the candidate's files, JSON {"files": {path: base64}}>
    <M bytes: the suite's files, the same form>

Result (runner -> host, on the stdout only the trusted server holds)::

    VERIFIER-RESULT <nonce> <recycle 0|1> {json: JobResult}\\n

Progress (runner -> host, the same stdout, before the result; only when the job's config asks
for it, `JobConfig.progress`)::

    VERIFIER-PROGRESS <nonce> <done> <total>\\n

Tests (or cases) finished so far of those collected, at most a few a second. It says how far a
run has come, never what it means: the verdict comes from the result line alone.

A server that takes more jobs (a warm pool's) says ``VERIFIER-READY`` when it starts and again
after each result once the candidate side is reset; the host may send the next job at once, but
starts that job's clock only at READY (a sandbox that cannot be reset ends instead).

`recycle` sits outside the JSON so a pool can read it without decoding the result. The
result is built by trusted code only, but it carries candidate-controlled text (output,
exception messages); `parse_result` checks every field's type, size and vocabulary before
the host uses any of it, and every string is made valid Unicode.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, is_dataclass, replace
from typing import IO, Any, Final, Literal, get_args

PROTOCOL_VERSION = 4

#: The trusted side (tests, result reporting). Never root.
TRUSTED_UID = 2000
#: Candidate processes. Cannot signal, trace or reconfigure the trusted side or the zygote.
CANDIDATE_UID = 2001
#: The zygote: forks candidate processes and resets the candidate side. It keeps only
#: CAP_SETUID/CAP_SETGID (to become CANDIDATE_UID in its children) and runs no candidate
#: code; its own uid keeps it out of the candidates' reach (kill, prlimit, setpriority).
ZYGOTE_UID = 2002

TRUSTED_DIR = "/run/trusted"
SUITE_DIR = f"{TRUSTED_DIR}/suite"
SCRATCH_DIR = "/tmp"
CANDIDATE_DIR = f"{SCRATCH_DIR}/candidate"
#: Every place the candidate's uid can write (tmpfs mounts); wiped between tests and jobs.
CANDIDATE_WRITABLE = (SCRATCH_DIR, "/dev/shm", "/dev/mqueue")
#: Top-level modules the sandbox image can import beyond `sys.stdlib_module_names`: a candidate
#: module may not take one of these names (trees.py). The wheels of
#: sandbox_images/python/requirements.txt (each with every top-level name it installs), the
#: runner, and what each base's interpreter brings (Debian's python3; python:3.11-slim's pip,
#: setuptools and wheel). tests/adversarial/test_candidate_trees.py checks it against the built image.
IMAGE_MODULES = frozenset(
    {
        "pytest", "_pytest", "py",  # pytest
        "pluggy", "iniconfig", "packaging", "pygments",
        "hypothesis", "_hypothesis_pytestplugin", "_hypothesis_ftz_detector", "_hypothesis_globals",
        "sortedcontainers",
        "verifier_runner",
        # Debian's python3 (the debootstrapped base): its site hook and CPython's test modules
        "sitecustomize", "_distutils_system_mod", "test", "__hello__", "__phello__", "_ctypes_test",
        "_testbuffer", "_testcapi", "_testclinic", "_testimportmultiple", "_testinternalcapi",
        "_testmultiphase", "_xxsubinterpreters", "_xxtestfuzz", "xxlimited", "xxlimited_35",
        # python:3.11-slim (the registry base)
        "pip", "setuptools", "pkg_resources", "_distutils_hack", "wheel",
    }
)  # fmt: skip

READY = b"VERIFIER-READY"
RESULT_PREFIX = b"VERIFIER-RESULT "
PROGRESS_PREFIX = b"VERIFIER-PROGRESS "
#: Least time between two progress lines of one job (the last one, done == total, always goes).
PROGRESS_INTERVAL_S = 0.2
BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0"}
#: Set by the host in the container's environment when the sandbox's kernel is gVisor (its value
#: "gvisor"); the launcher reads it before the split (see seccomp.gvisor_guard).
KERNEL_ENV = "VERIFIER_SANDBOX_KERNEL"
#: The kernels a runner can observe under it (`JobResult.kernel`): the host's own Linux kernel
#: (runc) or gVisor's user-space kernel.
KERNELS = ("linux", "gvisor")
#: syslog(2) SYSLOG_ACTION_READ_ALL: read the kernel's log without consuming it.
_SYSLOG_READ_ALL = 3
#: The first line of gVisor's kernel log (its Sentry writes it at boot; no other kernel does).
_GVISOR_LOG = b"Starting gVisor..."


@functools.cache
def observed_kernel() -> str:
    """The kernel this process runs on, as it observes it: "gvisor" or "linux".

    gVisor's kernel lets any process read its log, which begins with "Starting gVisor...". Under
    runc the log is the host kernel's, which a process without CAP_SYSLOG cannot read at all
    (Docker's seccomp profile and dmesg_restrict refuse it), and which never holds that line.
    So a sandbox named gVisor that is really runc (a `runsc` registered pointing at runc)
    reports "linux", whatever the host asked for. The environment (`KERNEL_ENV`) is what the
    host asked, never the evidence of what ran. Observed once per process: a process's kernel
    does not change under it.
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(4096)
        size = int(libc.klogctl(_SYSLOG_READ_ALL, buffer, len(buffer)))
    except (OSError, AttributeError):
        return "linux"
    return "gvisor" if size > 0 and _GVISOR_LOG in buffer.raw[:size] else "linux"


# A suite's shape: the one home of its values and its defaults (a suite.toml that says nothing
# gets these). suite.Manifest, Evidence and JobConfig all use them.
Runner = Literal["pytest", "direct"]
RUNNERS: tuple[Runner, ...] = get_args(Runner)
DEFAULT_RUNNER: Final = "pytest"
#: "per-test": every test gets a fresh candidate process on a wiped scratch space (default);
#: "per-run": one candidate process serves all tests of a run (faster; it can keep state).
CandidateProcess = Literal["per-test", "per-run"]
CANDIDATE_PROCESS: tuple[CandidateProcess, ...] = get_args(CandidateProcess)
DEFAULT_CANDIDATE_PROCESS: Final = "per-test"
#: "per-job": the tests run in a fork of the trusted server; "shared": in the server itself
#: (direct suites that opt in; see pristine.py).
TrustedProcess = Literal["per-job", "shared"]
TRUSTED_PROCESS: tuple[TrustedProcess, ...] = get_args(TrustedProcess)
DEFAULT_TRUSTED_PROCESS: Final = "per-job"

#: Why a test failed. The host's `FailureKind` is this list (a test checks they agree).
FAILURE_KINDS = (
    "assertion",
    "exception",
    "candidate_died",
    "timeout",
    "oom",
    "output_limit",
    "not_plain_data",
    "import_error",
    "collection_error",
    "skipped",
    "syntax_error",
    "overloaded",
    "infra",
    # programs (kind "program"): a case whose output was wrong, or whose program failed
    "wrong_answer",
    "runtime_error",
)

#: What a suite is: pytest/direct tests calling functions ("tests"), or cases of input and
#: expected output for a whole program on stdin/stdout ("program").
SuiteKind = Literal["tests", "program"]
KINDS: tuple[SuiteKind, ...] = get_args(SuiteKind)
DEFAULT_KIND: Final = "tests"
#: How a program's output is compared with a case's expected output (see cases.py); "none"
#: compares nothing: a case passes when the program exits 0 within its limits, and what it wrote
#: to stdout and stderr comes back (the run of a service such as SandboxFusion's /run_code).
COMPARE_MODES = ("exact", "tokens", "float", "checker", "none")
#: One program case's outcome: passed, or why not (a subset of FAILURE_KINDS).
CASE_OUTCOMES = ("passed", "wrong_answer", "runtime_error", "timeout", "oom", "output_limit", "overloaded", "infra")

MAX_FAILURES = 50
#: Most cases in one program suite (each comes back as a record in the result).
MAX_CASES = 1000
#: Longest line of a first difference shown in a case record.
MAX_LINE = 200
MAX_SUMMARY = 300
MAX_TEST_ID = 500
MAX_DETAIL = 4000
MAX_EXAMPLE = 1000

# -- the result line's budget ----------------------------------------------------------------
# A result line is ASCII JSON (`format_result_line`), so one character of text costs 1 byte
# (printable ASCII), 2 (`\n`, `"`), 6 (a control character, any other BMP character, U+FFFD
# for invalid UTF-8) or 12 (a character beyond the BMP: a surrogate pair). The candidate
# controls much of that text (its output, its exception messages, what its objects say about
# themselves), so the runner bounds every text field in JSON bytes, not characters, before the
# line is written (`bounded_result`); a field cut to fit says so (`cut_marker`). Every field's
# budget below is a sum the host can check: at most MAX_FAILURES failures of FAILURE_JSON_BYTES,
# MAX_CASES cases of CASE_JSON_BYTES, RESULT_FIXED_JSON_BYTES for the rest, and the candidate's
# output in at most `output_bytes` (the limit the caller set) of JSON. So the line always fits
# within `output_bytes + RESULT_OVERHEAD_BYTES`, whatever the candidate wrote or raised
# (tests/runner/test_result_budget.py computes the worst case from these constants).
#: JSON bytes (quotes included) of each text field of a failure record. A test id gets room for
#: MAX_TEST_ID characters of any kind (12 bytes each: never cut below the host's own limit).
FAILURE_FIELD_JSON = {
    "test_id": 12 * MAX_TEST_ID + 2,
    "summary": 1024,
    "falsifying_example": 4096,
    "detail_untrusted": 8192,
}
#: JSON bytes of one failure record: its text fields, its kind, keys and punctuation.
FAILURE_JSON_BYTES = 20 * 1024
#: JSON bytes (quotes included) of each text field of a program case's record.
CASE_FIELD_JSON = {"name": 512, "summary": 512, "expected_line": 256, "got_line_untrusted": 256}
#: JSON bytes of one case record: its text fields, outcome, numbers, keys and punctuation.
CASE_JSON_BYTES = 2 * 1024
#: JSON bytes of a result's sandbox error (a trusted summary).
ERROR_JSON_BYTES = 1024
#: JSON bytes of everything in a result besides its failures, cases and candidate output:
#: keys, vocabulary, counts and numbers, the sandbox error, the list and object punctuation.
RESULT_FIXED_JSON_BYTES = 4 * 1024
#: Result lines beyond the candidate output they carry (failures, cases, counts).
RESULT_OVERHEAD_BYTES = MAX_FAILURES * FAILURE_JSON_BYTES + MAX_CASES * CASE_JSON_BYTES + RESULT_FIXED_JSON_BYTES


#: compare = "none": the bytes of stdout (and as many of stderr) one case's program may write and
#: have back, of a run of `cases` cases; more is an output_limit. Both come back base64 (4 bytes
#: for 3, whatever they hold), so all of them together take at most half of `output_bytes` of the
#: result line's JSON; the run's candidate output (stderr log) gets the rest (`bounded_result`).
def kept_output_bytes(output_bytes: int, cases: int) -> int:
    share = output_bytes // 2 // max(1, cases)  # JSON bytes for one case's two outputs
    return max(0, (share - 16) * 3 // 8)  # two base64 strings of this, with their quotes, fit in it


#: Past this many times its limit in wall-clock time, a run or call that was waiting for a CPU
#: (not running, not sleeping) ends as `overloaded` instead of running on.
OVERLOAD_FACTOR = 4.0


_LAUNCH = ("python3", "-I", "-B", "-m", "verifier_runner.launch")


#: What a runner serving pytest suites imports once, before its first job (comma-separated).
#: Suites of the direct runner and programs need nothing: their pools preload "".
PYTEST_PRELOAD = "pytest,hypothesis"


def launch_command(max_jobs: int, preload: str = PYTEST_PRELOAD) -> list[str]:
    """The command that starts the runner as a server of up to `max_jobs` jobs."""
    return [*_LAUNCH, "--max-jobs", str(max_jobs), "--preload", preload or ","]


def is_launch_command(command: object) -> bool:
    """Whether `command` starts the runner (any server of its jobs can serve such a job)."""
    return isinstance(command, (list, tuple)) and tuple(command[: len(_LAUNCH)]) == _LAUNCH


class ProtocolError(ValueError):
    """A job or result that does not follow this protocol."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str, limit: int | None = None) -> str:
    """Valid Unicode (lone surrogates -> U+FFFD), at most `limit` characters."""
    text = _SURROGATE.sub("\ufffd", text)
    return text if limit is None or len(text) <= limit else text[:limit]


def summary_line(text: str) -> str:
    """A trusted summary on one line, bounded (control characters become spaces)."""
    text = clean(text)
    return "".join(ch if ch.isprintable() else " " for ch in text)[:MAX_SUMMARY]


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


# -- results -------------------------------------------------------------------------------
@dataclass(frozen=True)
class FailureRecord:
    test_id: str
    kind: str
    #: Written by trusted code from fixed templates and numbers only, never candidate text.
    summary: str
    #: Hypothesis' minimal failing input, from the note Hypothesis itself attached.
    falsifying_example: str | None = None
    #: May contain candidate-controlled text (exception messages, values).
    detail_untrusted: str = ""


@dataclass(frozen=True)
class JobCounts:
    expected: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class CaseRecord:
    """What one case of a program job did. Written by trusted code; candidate text only in
    `got_line_untrusted`."""

    name: str
    #: CASE_OUTCOMES
    outcome: str
    #: From fixed templates and numbers only.
    summary: str
    #: False for a case not run (the run gave up before it); `outcome` then says why.
    ran: bool = True
    #: Charged time from the fork to the program's exit (or to the kill).
    time_s: float = 0.0
    #: Wall time from the fork to the program's end (or to the kill).
    wall_s: float = 0.0
    #: CPU time of the program (user + system), from the kernel.
    cpu_s: float = 0.0
    #: Peak resident memory of the program, from the kernel.
    memory_bytes: int = 0
    exit_code: int | None = None
    signal: int | None = None
    #: First difference of a wrong answer: line numbers (1-based) in the expected output and in
    #: the program's output, the expected line (the suite's text) and the program's line.
    line: int | None = None
    output_line: int | None = None
    expected_line: str | None = None
    got_line_untrusted: str | None = None
    #: compare = "none": what the program wrote to stdout, base64 (all of it: a program that
    #: writes more than `kept_output_bytes` is an output_limit), and to stderr, base64 (its first
    #: `kept_output_bytes`), with how many bytes it wrote to stderr in all.
    stdout_b64: str | None = None
    stderr_b64: str | None = None
    stderr_bytes: int = 0


@dataclass(frozen=True)
class JobResult:
    runner: str
    exit_code: int
    counts: JobCounts
    failures: list[FailureRecord] = field(default_factory=list)
    #: All failures, also those beyond MAX_FAILURES that were not sent.
    failures_total: int = 0
    import_failed: bool = False
    calls: int = 0
    candidate_output: str = ""
    candidate_output_bytes: int = 0
    tests_s: float = 0.0
    #: Time the run waited for a CPU on a busy host; not charged to the candidate.
    host_wait_s: float = 0.0
    #: The trusted side failed (not the candidate's doing); a trusted summary.
    sandbox_error: str | None = None
    #: A process in the sandbox was killed for memory while this job ran.
    oom: bool = False
    #: "tests" or "program"; a program job reports every case (in order) in `cases`.
    kind: str = "tests"
    cases: list[CaseRecord] = field(default_factory=list)
    #: The kernel the trusted side observed while it made this result (KERNELS): the host
    #: refuses a result whose kernel is not the one its runtime runs (`sandbox.runtime`).
    kernel: str = field(default_factory=observed_kernel)


def json_size(text: str) -> int:
    """Bytes of `text` as a string in a result line's JSON (ASCII, quotes included)."""
    return len(json.dumps(text, ensure_ascii=True))


def cut_marker(cut: int, total: int) -> str:
    """What stands in a text field for the characters cut from it to fit the result line."""
    return f" [verifier: {cut} of {total} characters cut] "


def _fitting_prefix(text: str, room: int) -> int:
    """The most characters from the start of `text` (valid Unicode) whose JSON, quotes left out,
    takes at most `room` bytes: the text is encoded once and cut there, backing off an escape
    the cut would split (at most 11 bytes), and off half a surrogate pair."""
    encoded = json.dumps(text, ensure_ascii=True)[1:-1]
    if len(encoded) <= room:
        return len(text)
    for cut in range(room, max(-1, room - 12), -1):
        try:
            piece: str = json.loads(f'"{encoded[:cut]}"')
        except ValueError:
            continue  # the cut split an escape
        kept = len(piece)
        return kept - 1 if kept and "\ud800" <= piece[-1] <= "\udbff" else kept
    return 0


def fit(text: str, max_json: int, *, max_chars: int | None = None, keep_end: bool = False) -> str:
    """`text` as valid Unicode that takes at most `max_json` bytes of a result line's JSON and has
    at most `max_chars` characters. What does not fit is cut (from the end, or from the start
    when `keep_end`: a traceback's last lines say the most) and `cut_marker` says how much."""
    total = len(text)
    # No more characters can be kept than there are bytes: clean (per character) only those.
    most = max(0, min(total, max_json if max_chars is None else min(max_chars, max_json)))
    text = clean(text[total - most :] if keep_end else text[:most])
    if most == total and json_size(text) <= max_json:
        return text
    longest = cut_marker(total, total)  # ASCII and printable: one JSON byte a character
    room_json = max_json - 2 - len(longest)
    room_chars = most - len(longest)
    if room_json < 0 or room_chars < 0:
        return ""
    # Cutting from the start is cutting the reversed text from its end (a character is one code
    # point either way, and costs the same).
    piece = (text[::-1] if keep_end else text)[:room_chars]
    kept = _fitting_prefix(piece, room_json)
    marker = cut_marker(total - kept, total)
    return marker + piece[:kept][::-1] if keep_end else piece[:kept] + marker


def bounded_failure(record: FailureRecord) -> FailureRecord:
    """`record` with every text field within its JSON budget (`FAILURE_FIELD_JSON`)."""
    budget = FAILURE_FIELD_JSON
    example = record.falsifying_example
    return FailureRecord(
        test_id=fit(record.test_id, budget["test_id"], max_chars=MAX_TEST_ID),
        kind=record.kind if record.kind in FAILURE_KINDS else "infra",
        summary=fit(record.summary, budget["summary"], max_chars=MAX_SUMMARY),
        falsifying_example=None
        if example is None
        else fit(example, budget["falsifying_example"], max_chars=MAX_EXAMPLE),
        detail_untrusted=fit(record.detail_untrusted, budget["detail_untrusted"], max_chars=MAX_DETAIL, keep_end=True),
    )


def bounded_case(record: CaseRecord) -> CaseRecord:
    """`record` with every text field within its JSON budget (`CASE_FIELD_JSON`)."""
    budget = CASE_FIELD_JSON

    def line(text: str | None, name: str) -> str | None:
        return None if text is None else fit(text, budget[name], max_chars=MAX_LINE)

    return replace(
        record,
        name=fit(record.name, budget["name"], max_chars=MAX_TEST_ID),
        outcome=record.outcome if record.outcome in CASE_OUTCOMES else "infra",
        summary=fit(record.summary, budget["summary"], max_chars=MAX_SUMMARY),
        expected_line=line(record.expected_line, "expected_line"),
        got_line_untrusted=line(record.got_line_untrusted, "got_line_untrusted"),
    )


def bounded_result(result: JobResult, output_bytes: int | None = None) -> JobResult:
    """`result` within the result line's budget: at most MAX_FAILURES failures and MAX_CASES
    cases, each within its own budget, and the candidate's output in at most `output_bytes`
    bytes of JSON (its start kept; None: left as it is, for results that carry no job's). The
    outputs kept by compare = "none" share that budget: at most half of it (a kept output that
    would not fit, which `kept_output_bytes` rules out, is dropped), the candidate output the rest."""
    output = result.candidate_output
    cases, kept = _kept_within(
        [bounded_case(c) for c in result.cases[:MAX_CASES]], None if output_bytes is None else output_bytes // 2
    )
    return replace(
        result,
        failures=[bounded_failure(f) for f in result.failures[:MAX_FAILURES]],
        failures_total=max(result.failures_total, len(result.failures)),
        cases=cases,
        candidate_output=clean(output) if output_bytes is None else fit(output, output_bytes - kept),
        sandbox_error=None if result.sandbox_error is None else fit(result.sandbox_error, ERROR_JSON_BYTES),
    )


def _kept_within(cases: list[CaseRecord], budget: int | None) -> tuple[list[CaseRecord], int]:
    """`cases` with their kept outputs (base64) within `budget` JSON bytes in all (None: no
    budget), and the bytes they take."""
    used = 0

    def within(value: str | None) -> str | None:
        nonlocal used
        if value is None or not isinstance(value, str) or not value.isascii():
            return None
        if budget is not None and used + len(value) + 2 > budget:
            return None
        used += len(value) + 2
        return value

    kept = [replace(c, stdout_b64=within(c.stdout_b64), stderr_b64=within(c.stderr_b64)) for c in cases]
    return kept, used


def format_result_line(nonce: str, recycle: bool, result: JobResult, output_bytes: int | None = None) -> bytes:
    """The result line of a job; `result` is bounded first (`bounded_result`), so the line fits
    within the host's limit, `output_bytes + RESULT_OVERHEAD_BYTES`, whatever it carries."""
    payload = json.dumps(plain(bounded_result(result, output_bytes)), ensure_ascii=True, separators=(",", ":"))
    return RESULT_PREFIX + f"{nonce} {int(recycle)} ".encode() + payload.encode() + b"\n"


def format_progress_line(nonce: str, done: int, total: int) -> bytes:
    return PROGRESS_PREFIX + f"{nonce} {done} {total}\n".encode()


def parse_progress_line(line: bytes, nonce: str) -> tuple[int, int] | None:
    """(done, total) of this job's progress line; None for anything else (another job's nonce,
    a malformed or implausible line)."""
    if not line.startswith(PROGRESS_PREFIX):
        return None
    parts = line[len(PROGRESS_PREFIX) :].rstrip(b"\n").split(b" ")
    if len(parts) != 3 or parts[0] != nonce.encode() or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    if len(parts[1]) > 9 or len(parts[2]) > 9:
        return None
    done, total = int(parts[1]), int(parts[2])
    return (done, total) if done <= total else None


def split_result_line(line: bytes) -> tuple[str, bool, bytes] | None:
    """(nonce, recycle, payload) of a result line, or None when `line` is not one."""
    if not line.startswith(RESULT_PREFIX):
        return None
    parts = line[len(RESULT_PREFIX) :].split(b" ", 2)
    if len(parts) != 3 or parts[1] not in (b"0", b"1"):
        return None
    return parts[0].decode("ascii", "replace"), parts[1] == b"1", parts[2].rstrip(b"\n")


def _want(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise ProtocolError(f"result field {name}: unexpected {type(value).__name__}")
    return value


def _count(value: Any, name: str) -> int:
    number: int = _want(value, int, name)
    if number < 0:
        raise ProtocolError(f"result field {name}: negative")
    return number


def _number(value: Any, name: str) -> float:
    return float(_want(value, (int, float), name))


def _failure(raw: Any) -> FailureRecord:
    raw = _want(raw, dict, "failures[]")
    kind = _want(raw.get("kind"), str, "kind")
    if kind not in FAILURE_KINDS:
        raise ProtocolError(f"result field kind: unknown {kind[:40]!r}")
    example = raw.get("falsifying_example")
    return FailureRecord(
        test_id=summary_line(_want(raw.get("test_id"), str, "test_id"))[:MAX_TEST_ID],
        kind=kind,
        summary=summary_line(_want(raw.get("summary"), str, "summary")),
        falsifying_example=None if example is None else summary_line(_want(example, str, "example"))[:MAX_EXAMPLE],
        detail_untrusted=clean(_want(raw.get("detail_untrusted", ""), str, "detail"), MAX_DETAIL),
    )


def _optional_int(value: Any, name: str) -> int | None:
    return None if value is None else int(_want(value, int, name))


def _optional_line(value: Any, name: str, *, trusted: bool) -> str | None:
    if value is None:
        return None
    text = _want(value, str, name)
    return summary_line(text)[:MAX_LINE] if trusted else clean(text, MAX_LINE)


def _case(raw: Any) -> CaseRecord:
    raw = _want(raw, dict, "cases[]")
    outcome = _want(raw.get("outcome"), str, "outcome")
    if outcome not in CASE_OUTCOMES:
        raise ProtocolError(f"result field outcome: unknown {outcome[:40]!r}")
    return CaseRecord(
        name=summary_line(_want(raw.get("name"), str, "name"))[:MAX_TEST_ID],
        outcome=outcome,
        summary=summary_line(_want(raw.get("summary"), str, "summary")),
        ran=bool(_want(raw.get("ran", True), bool, "ran")),
        time_s=_number(raw.get("time_s", 0.0), "time_s"),
        wall_s=_number(raw.get("wall_s", 0.0), "wall_s"),
        cpu_s=_number(raw.get("cpu_s", 0.0), "cpu_s"),
        memory_bytes=_count(raw.get("memory_bytes", 0), "memory_bytes"),
        exit_code=_optional_int(raw.get("exit_code"), "exit_code"),
        signal=_optional_int(raw.get("signal"), "signal"),
        line=_optional_int(raw.get("line"), "line"),
        output_line=_optional_int(raw.get("output_line"), "output_line"),
        expected_line=_optional_line(raw.get("expected_line"), "expected_line", trusted=True),
        got_line_untrusted=_optional_line(raw.get("got_line_untrusted"), "got_line_untrusted", trusted=False),
        stdout_b64=_optional_b64(raw.get("stdout_b64"), "stdout_b64"),
        stderr_b64=_optional_b64(raw.get("stderr_b64"), "stderr_b64"),
        stderr_bytes=_count(raw.get("stderr_bytes", 0), "stderr_bytes"),
    )


def _optional_b64(value: Any, name: str) -> str | None:
    """A kept output: base64 text (checked here, decoded by the verdict), or None."""
    if value is None:
        return None
    text: str = _want(value, str, name)
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        raise ProtocolError(f"result field {name}: not base64") from None
    return text


def parse_result(payload: bytes, *, max_bytes: int) -> JobResult:
    """Check and build a JobResult from a result line's JSON. Raises ProtocolError."""
    if len(payload) > max_bytes:
        raise ProtocolError(f"result of {len(payload)} bytes, over the {max_bytes}-byte limit")
    try:
        raw = _want(json.loads(payload), dict, "result")
    except ValueError as exc:
        raise ProtocolError(f"result is not JSON ({exc.__class__.__name__})") from None
    counts = _want(raw.get("counts"), dict, "counts")
    error = raw.get("sandbox_error")
    failures = _want(raw.get("failures", []), list, "failures")
    if len(failures) > MAX_FAILURES:
        raise ProtocolError("result field failures: too many")
    runner = _want(raw.get("runner"), str, "runner")
    if runner not in RUNNERS:
        raise ProtocolError("result field runner: unknown")
    kind = _want(raw.get("kind", "tests"), str, "kind")
    if kind not in KINDS:
        raise ProtocolError("result field kind: unknown")
    cases = _want(raw.get("cases", []), list, "cases")
    if len(cases) > MAX_CASES:
        raise ProtocolError("result field cases: too many")
    kernel = _want(raw.get("kernel"), str, "kernel")
    if kernel not in KERNELS:
        raise ProtocolError("result field kernel: unknown")
    return JobResult(
        runner=runner,
        exit_code=_want(raw.get("exit_code"), int, "exit_code"),
        counts=JobCounts(
            **{k: _count(counts.get(k, 0), k) for k in ("expected", "passed", "failed", "errors", "skipped")}
        ),
        failures=[_failure(f) for f in failures],
        failures_total=_count(raw.get("failures_total", len(failures)), "failures_total"),
        import_failed=bool(_want(raw.get("import_failed", False), bool, "import_failed")),
        calls=_count(raw.get("calls", 0), "calls"),
        candidate_output=clean(_want(raw.get("candidate_output", ""), str, "candidate_output")),
        candidate_output_bytes=_count(raw.get("candidate_output_bytes", 0), "candidate_output_bytes"),
        tests_s=_number(raw.get("tests_s", 0.0), "tests_s"),
        host_wait_s=_number(raw.get("host_wait_s", 0.0), "host_wait_s"),
        sandbox_error=None if error is None else summary_line(_want(error, str, "sandbox_error")),
        oom=bool(_want(raw.get("oom", False), bool, "oom")),
        kind=kind,
        cases=[_case(c) for c in cases],
        kernel=kernel,
    )
