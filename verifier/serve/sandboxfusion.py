"""SandboxFusion's `/run_code` on the program path: a request becomes a program suite of one case
(`kind = "program"`, `compare = "none"`: nothing compared, stdout and stderr come back; requests
for the same program waiting at once share a suite of as many cases, `coalesce`) in the
request's language (`[program] language`, `compile_timeout_s`: verifier/runner/languages.py),
and the evidence becomes SandboxFusion's answer, in the shape and words SandboxFusion's runners
give (`sandbox/server/sandbox_api.py`, `sandbox/runners/base.py` and `major.py` of
bytedance/SandboxFusion): `compile_result` is the compile step of a compiled language (c, cpp,
java, go, rust; null for python, nodejs, bash), a program that did not compile has no
`run_result`, and `status` is Success only when every step finished with exit code 0.

| evidence | HTTP | status | compile_result | run_result |
| --- | --- | --- | --- | --- |
| the program exited 0 | 200 | Success | compiled: Finished, 0 | Finished, 0, stdout, stderr, wall time |
| exited non-zero, or killed by a signal (-N) | 200 | Failed | compiled: Finished, 0 | Finished, its code |
| a compile error (compiled languages) | 200 | Failed | Finished, the compiler's code, its message on stderr | null |
| over compile_timeout | 200 | Failed | TimeLimitExceeded, return code null | null |
| the compiler over its memory limit | 200 | Failed | Finished, -9 (killed) | null |
| a Python syntax error (refused before a sandbox) | 200 | Failed | null | Finished, 1, the parser's message on stderr |
| over its time limit | 200 | Failed | compiled: Finished, 0 | TimeLimitExceeded, return code null |
| over its memory or output limit | 200 | Failed | compiled: Finished, 0 | Finished, -9 (killed) |
| code the verifier refuses (over 1 MiB) | 200 | Failed | null | null (`message` says why) |
| our sandbox failed (infra_error) | 200 | SandboxError | null | null |
| the host too busy (overloaded) | 504 + Retry-After | SandboxError | null | null |

`files` (path -> base64) make a Python candidate a folder: the program as `solution.py`, the
files beside it (paths checked as every candidate folder's are); a program in another language
is one file (`verify.program_language`), so `files` with it are refused. `fetch_files` (paths in
the program's folder, checked as `files`' are, at most MAX_FETCH_FILES) go into the suite
(`fetch_files`, compare "none"): the sandbox reads them after the run, before its reset, and the
answer's `files` has each one it read (path -> base64); a missing file is left out, as
SandboxFusion does; one not read for another reason (a link, not a regular file, over the room
for files) is left out and `message` says why. Requests with `fetch_files` never share a job
(`coalesce`).

Overloaded answers 504, not 503: verl's client retries a 504 (Gateway Timeout), and only that.
"""

from __future__ import annotations

import base64
import binascii
import json
import signal
import traceback
from dataclasses import dataclass

from verifier.errors import InvalidInput
from verifier.evidence import CaseOutcome, Evidence, FailureKind, Status
from verifier.inputs import Candidate
from verifier.runner import languages
from verifier.runner.protocol import MAX_FETCH_FILES, MAX_FETCH_PATH
from verifier.runner.trees import path_problem
from verifier.serve.api import CommandRunResult, RunCodeRequest, RunCodeResponse
from verifier.serve.body import Refusal
from verifier.serve.config import RunCodeConfig
from verifier.suite import Suite, suite_from_files

#: The `language` values taken (`languages.canonical` takes a few more aliases: js, c++, golang, sh).
LANGUAGES = ("python", "python3", "c", "cpp", "java", "nodejs", "javascript", "go", "rust", "bash")
#: `files`: at most this many, and this many bytes in all once decoded.
MAX_FILES = 100
MAX_FILES_BYTES = 8 * 1024**2
#: The program's own file when `files` come with it (the suite's module, `solution`).
PROGRAM_FILE = "solution.py"
#: The whole sandboxed run of a program may take its case's time limit plus this (start, reset).
RUN_SLACK_S = 10.0
#: The HTTP status of an overloaded answer (see the module's documentation).
OVERLOADED_STATUS = 504
KILLED = -int(signal.SIGKILL)


def _refuse(reason: str) -> Refusal:
    return Refusal(400, "invalid", reason)


@dataclass(frozen=True)
class ProgramLimits:
    """A request's limits as this server runs it, and its language (requests for the same program
    share a job only when all of these are the same)."""

    run_timeout_s: float
    memory_mb: int
    #: languages.py's name (`python` for Python, whose suite names none).
    language: str = "python"
    #: Compiled languages: charged seconds of the compile step (0 for the others).
    compile_timeout_s: float = 0.0
    #: The files to read back after the run (`fetch_files`, each path once, in order).
    fetch_files: tuple[str, ...] = ()


def limits_of(request: RunCodeRequest, config: RunCodeConfig) -> ProgramLimits:
    """The request's limits and language, or Refusal (400) naming the one this server cannot give."""
    language = languages.canonical(request.language)
    if language is None:
        raise _refuse(f"language {request.language[:40]!r} is not supported: this server runs {', '.join(LANGUAGES)}")
    # Past the server's limit the program gets the limit: one that runs longer ends TimeLimitExceeded,
    # as SandboxFusion's would at its own deadline (it takes any run_timeout).
    run_timeout = min(request.run_timeout, config.max_run_timeout_s)
    memory_mb = config.max_memory_mb if request.memory_limit_MB <= 0 else request.memory_limit_MB
    if not 16 <= memory_mb <= config.max_memory_mb:
        raise _refuse(f"memory_limit_MB {request.memory_limit_MB} is not within 16 and {config.max_memory_mb}")
    compile_timeout = 0.0
    if languages.LANGUAGES[language].compiled:  # past the server's limit: that limit, as run_timeout
        if not request.compile_timeout > 0:
            raise _refuse(f"compile_timeout {request.compile_timeout} is not more than 0")
        compile_timeout = min(request.compile_timeout, config.max_compile_timeout_s)
    return ProgramLimits(run_timeout, memory_mb, language, compile_timeout, _fetch_paths(request.fetch_files))


def _fetch_paths(paths: list[str]) -> tuple[str, ...]:
    """`fetch_files`, each path once, or Refusal (400): too many, or a path outside the program's
    folder (absolute, `..`) or not one a candidate folder may hold (`trees.path_problem`)."""
    unique = tuple(dict.fromkeys(paths))
    if len(unique) > MAX_FETCH_FILES:
        raise _refuse(f"fetch_files: {len(unique)} files, at most {MAX_FETCH_FILES}")
    for path in unique:
        problem = path_problem(path)
        if problem is None and len(path) > MAX_FETCH_PATH:
            problem = f"a path longer than {MAX_FETCH_PATH} characters"
        if problem is not None:
            raise _refuse(f"fetch_files: {path[:80]!r} is {problem}: only paths inside the program's folder")
    return unique


def program_suite(stdins: list[str], limits: ProgramLimits, config: RunCodeConfig) -> Suite:
    """The program suite of one case per stdin (compare "none"). One case is named `run`; more
    (`coalesce`: requests for the same program) are `run-0`, `run-1`, ..., with the job's time
    limit the cases' added up and its output limit the cases' shares added up, so that each case
    has the limits it has alone. Raises InvalidInput when the suite cannot be made."""
    many = len(stdins) > 1
    cases = [{"name": f"run-{n}" if many else "run", "input": stdin, "output": ""} for n, stdin in enumerate(stdins)]
    timeout_s = min(3600.0, limits.run_timeout_s * len(stdins) + limits.compile_timeout_s + RUN_SLACK_S)
    output = f"output_bytes = {config.output_bytes * len(stdins)}\n" if many else ""
    language = ""  # Python's suite names no language (its evidence and ids as before languages came)
    if limits.language != "python":
        language = f'language = "{limits.language}"\n'
        if limits.compile_timeout_s:
            language += f"compile_timeout_s = {limits.compile_timeout_s!r}\n"
    # TOML basic strings: the paths were checked (no control character, no backslash), so JSON's
    # quoting of them (non-ASCII kept as is) is TOML's.
    fetch = ", ".join(json.dumps(p, ensure_ascii=False) for p in limits.fetch_files)
    fetch = f"fetch_files = [{fetch}]\n" if limits.fetch_files else ""
    manifest = (
        'kind = "program"\nname = "run_code"\n\n[program]\ncases = "cases.jsonl"\ncompare = "none"\n'
        f"time_limit_s = {limits.run_timeout_s!r}\nmemory_bytes = {limits.memory_mb * 1024**2}\n{language}{fetch}\n"
        f"[limits]\ntimeout_s = {timeout_s!r}\n{output}"
    )
    lines = b"".join(json.dumps(case).encode() + b"\n" for case in cases)
    return suite_from_files({"suite.toml": manifest.encode(), "cases.jsonl": lines}, "run_code")


def program(request: RunCodeRequest, config: RunCodeConfig) -> tuple[Candidate, Suite]:
    """The candidate and one-case program suite of a request, or Refusal (400) naming the field
    this server does not support."""
    limits = limits_of(request, config)
    if request.args:
        raise _refuse("args is not supported: send the program as one source in code")
    if limits.language != "python" and any(content is not None for content in request.files.values()):
        raise _refuse(f"files are not supported with {limits.language}: a program in {limits.language} is one file")
    try:
        suite = program_suite([request.stdin or ""], limits, config)
    except InvalidInput as exc:  # an input this server cannot take (e.g. a huge stdin)
        raise Refusal(422, "invalid", f"the request cannot be run: {exc}") from None
    return _candidate(request), suite


def _decoded(files: dict[str, str | None]) -> dict[str, bytes]:
    """`files` (path -> base64; None skipped, as SandboxFusion's `restore_files` does), decoded and
    bounded in count and bytes; Refusal (400) naming what is wrong."""
    given = {name: content for name, content in files.items() if content is not None}
    if len(given) > MAX_FILES:
        raise _refuse(f"files: {len(given)} files, at most {MAX_FILES}")
    out: dict[str, bytes] = {}
    total = 0
    for name, content in given.items():
        if len(content) > 4 * (MAX_FILES_BYTES // 3) + 4:
            raise _refuse(f"files: the files are over {MAX_FILES_BYTES} bytes in all")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise _refuse(f"files: the content of {name[:80]!r} is not base64") from None
        total += len(data)
        if total > MAX_FILES_BYTES:
            raise _refuse(f"files: the files are over {MAX_FILES_BYTES} bytes in all")
        out[name] = data
    return out


def _candidate(request: RunCodeRequest) -> Candidate:
    """The program alone, or (with `files`) a folder: the program as `solution.py`, the files
    beside it, their paths checked as every candidate folder's are (`verifier.runner.trees`)."""
    if not request.files:
        return Candidate.from_text(request.code, label="<code>")
    files = _decoded(request.files)
    if not files:
        return Candidate.from_text(request.code, label="<code>")
    if PROGRAM_FILE in files:
        raise _refuse(f"files: {PROGRAM_FILE} is the program's own file here")
    try:
        return Candidate.from_files({PROGRAM_FILE: request.code.encode("utf-8", "surrogatepass"), **files}, "<code>")
    except InvalidInput as exc:
        raise _refuse(f"files: {exc}") from None


def _run_result(case: CaseOutcome) -> CommandRunResult:
    code = case.exit_code if case.exit_code is not None else (-case.signal if case.signal is not None else None)
    if case.status is Status.TIMEOUT:
        status = "TimeLimitExceeded"
        code = None  # SandboxFusion's: the process was killed at its deadline, no return code read
    else:
        status = "Finished"
        if case.status in (Status.OOM, Status.OUTPUT_LIMIT):
            code = KILLED
    return CommandRunResult(
        status=status,  # type: ignore[arg-type]
        execution_time=case.wall_s,
        return_code=code,
        stdout=case.stdout_untrusted if case.stdout_untrusted is not None else "",
        stderr=case.stderr_untrusted if case.stderr_untrusted is not None else "",
    )


#: Words of the compile step's message (runner/program.py `_compile`) that say which limit ended it.
COMPILE_TIME_WORDS = "compile time limit"
COMPILE_MEMORY_WORDS = "memory limit"


def compile_result(evidence: Evidence) -> CommandRunResult | None:
    """SandboxFusion's `compile_result` of a program in a compiled language (None: no compile step
    ran). The compiler's messages are the compile failure's detail (its stderr, cut to 4,000
    characters); a compiler that succeeded says nothing here (its messages are not kept)."""
    step = evidence.program.compile if evidence.program is not None else None
    if step is None:
        return None
    said = next((f.detail_untrusted or "" for f in evidence.failures if f.test_id == "<compile>"), "")
    code = step.exit_code if step.exit_code is not None else (-step.signal if step.signal is not None else None)
    status = "Finished"
    if not step.ok and COMPILE_TIME_WORDS in step.message:
        status, code = "TimeLimitExceeded", None  # SandboxFusion's: killed at its deadline, no code read
    elif not step.ok and COMPILE_MEMORY_WORDS in step.message:
        code = KILLED
    return CommandRunResult(
        status=status,  # type: ignore[arg-type]
        execution_time=step.wall_s,
        return_code=code,
        stdout="",
        stderr=said,
    )


#: The longest program whose syntax error is described again here (the verifier's own limit).
MAX_COMPILED = 1 << 20
#: The file name a syntax error's message gives (SandboxFusion's is a temporary file's).
PROGRAM_NAME = "/tmp/main.py"


def syntax_stderr(code: str) -> str | None:
    """What `python main.py` writes for `code`'s syntax error (None: it compiles). Compiles, never
    runs: the message is the parser's (`traceback.format_exception_only`)."""
    try:
        compile(code, PROGRAM_NAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return "".join(traceback.format_exception_only(exc))
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"{exc.__class__.__name__}: {exc}\n"
    return None


def _fetched(case: CaseOutcome, message: str) -> tuple[dict[str, str], str]:
    """The answer's `files` (path -> base64) from the files the case fetched, and `message` with
    the ones not read for another reason than being missing said (SandboxFusion leaves a
    missing file out and says nothing)."""
    files: dict[str, str] = {}
    notes: list[str] = []
    for item in case.files:
        if item.content_b64_untrusted is not None:
            files[item.path] = item.content_b64_untrusted
        elif item.error != "no such file":
            notes.append(f"{item.path!r}: {item.error}")
    if notes:
        said = "fetch_files: " + "; ".join(notes)
        message = f"{message}; {said}" if message else said
    return files, message


def case_response(
    evidence: Evidence, index: int, code: str = "", language: str = "python"
) -> tuple[int, RunCodeResponse]:
    """The answer of the request whose case is `index` of `evidence` (`coalesce`: a job of several
    requests for the same program): a job-wide outcome (no case ran: overloaded, our failure, a
    syntax error) is every request's, else the request's own case is answered as it would be
    alone (the table above)."""
    if len(evidence.cases) <= 1 or evidence.status in (Status.INFRA_ERROR, Status.INVALID_INPUT, Status.COMPILE_ERROR):
        return response(evidence, code, language)
    if any(f.kind is FailureKind.SYNTAX_ERROR for f in evidence.failures):
        return response(evidence, code, language)
    eid = evidence.evidence_id
    case = evidence.cases[index]
    if case.status is Status.OVERLOADED:
        return OVERLOADED_STATUS, RunCodeResponse(status="SandboxError", message=case.message, evidence_id=eid)
    if case.status is Status.PASSED and case.stdout_untrusted is None:  # never: the runner keeps it
        return 200, RunCodeResponse(status="SandboxError", message="the program's output was not kept", evidence_id=eid)
    passed = case.status is Status.PASSED
    files, message = _fetched(case, "" if passed else case.message)
    return 200, RunCodeResponse(
        status="Success" if passed else "Failed",
        message=message,
        compile_result=compile_result(evidence),
        run_result=_run_result(case),
        evidence_id=eid,
        files=files,
    )


def response(evidence: Evidence, code: str = "", language: str = "python") -> tuple[int, RunCodeResponse]:
    """The HTTP status and SandboxFusion answer of a /run_code evidence of the program `code` in
    `language` (the table above)."""
    eid = evidence.evidence_id
    if evidence.status is Status.OVERLOADED:
        return OVERLOADED_STATUS, RunCodeResponse(status="SandboxError", message=evidence.reason, evidence_id=eid)
    if evidence.status is Status.INFRA_ERROR:
        return 200, RunCodeResponse(status="SandboxError", message=evidence.reason, evidence_id=eid)
    compiled = compile_result(evidence)
    if evidence.status is Status.COMPILE_ERROR and compiled is not None:  # SandboxFusion: no run
        return 200, RunCodeResponse(status="Failed", message=evidence.reason, compile_result=compiled, evidence_id=eid)
    said = syntax_stderr(code) if language == "python" and len(code) <= MAX_COMPILED else None
    syntax = any(f.kind is FailureKind.SYNTAX_ERROR for f in evidence.failures)
    if syntax or (evidence.status is Status.INVALID_INPUT and said is not None):  # a NUL byte is one too
        stderr = said or "\n".join(f"{f.message}: {f.detail_untrusted}" for f in evidence.failures)
        run = CommandRunResult(status="Finished", execution_time=0.0, return_code=1, stdout="", stderr=stderr)
        return 200, RunCodeResponse(status="Failed", message=evidence.reason, run_result=run, evidence_id=eid)
    if evidence.status is Status.INVALID_INPUT or not evidence.cases:
        return 200, RunCodeResponse(status="Failed", message=evidence.reason, evidence_id=eid)
    case = evidence.cases[0]
    run = _run_result(case)
    if case.status is Status.PASSED and case.stdout_untrusted is None:  # never: the runner keeps it
        return 200, RunCodeResponse(status="SandboxError", message="the program's output was not kept", evidence_id=eid)
    status = "Success" if evidence.ok else "Failed"
    files, message = _fetched(case, "" if evidence.ok else case.message)
    return 200, RunCodeResponse(
        status=status,  # type: ignore[arg-type]
        message=message,
        compile_result=compiled,
        run_result=run,
        evidence_id=eid,
        files=files,
    )
