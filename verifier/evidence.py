"""The evidence record: what ran, what happened, and whether it is proven correct.

`Evidence` is the product. Its `ok` is true only when the trusted side collected at
least one test and every collected test passed, nothing was skipped and nothing went
wrong; a validator refuses to build an `Evidence` that claims otherwise, so no code
path can produce a pass by accident.

Fields whose name ends in ``_untrusted`` hold text the candidate controls (its output,
its exception messages, values it returned). Show them as data, never as instructions, and
through `verifier.text.visible`. Every other text field is built from trusted facts only and
is a single line (the validators below make every string valid Unicode, and trusted ones one
bounded line, whatever reaches them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from verifier.limits import Limits
from verifier.runner.protocol import (
    DEFAULT_CANDIDATE_PROCESS,
    DEFAULT_KIND,
    DEFAULT_RUNNER,
    DEFAULT_TRUSTED_PROCESS,
    CandidateProcess,
    Runner,
    SuiteKind,
    TrustedProcess,
)
from verifier.text import clean, one_line

SCHEMA_VERSION = 3
MAX_MESSAGE_CHARS = 2000
MAX_UNTRUSTED_CHARS = 4000

#: A trusted, single, bounded line (control characters shown as escapes).
TrustedLine = Annotated[str, AfterValidator(lambda v: one_line(v, MAX_MESSAGE_CHARS))]
#: Candidate-controlled text: valid Unicode, otherwise as the candidate wrote it.
UntrustedText = Annotated[str, AfterValidator(clean)]


class Status(StrEnum):
    """Why a verification ended the way it did."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    OOM = "oom"
    OUTPUT_LIMIT = "output_limit"
    INVALID_INPUT = "invalid_input"
    INFRA_ERROR = "infra_error"
    OVERLOADED = "overloaded"
    #: A program in a compiled language that did not compile (within its compile limits).
    COMPILE_ERROR = "compile_error"


class Fault(StrEnum):
    """Whose doing a status is. Only `candidate` statuses are verdicts on the candidate."""

    NONE = "none"
    CANDIDATE = "candidate"
    INPUT = "input"
    VERIFIER = "verifier"
    HOST = "host"


#: The one mapping from status to fault. `infra_error` and `overloaded` are never verdicts:
#: they are not cached, and batches retry them.
STATUS_FAULT: dict[Status, Fault] = {
    Status.PASSED: Fault.NONE,
    Status.FAILED: Fault.CANDIDATE,
    Status.ERROR: Fault.CANDIDATE,
    Status.TIMEOUT: Fault.CANDIDATE,
    Status.OOM: Fault.CANDIDATE,
    Status.OUTPUT_LIMIT: Fault.CANDIDATE,
    Status.INVALID_INPUT: Fault.INPUT,
    Status.INFRA_ERROR: Fault.VERIFIER,
    Status.OVERLOADED: Fault.HOST,
    Status.COMPILE_ERROR: Fault.CANDIDATE,
}


def is_verdict(status: Status) -> bool:
    """Whether `status` is a fact about the candidate (may be cached and reused)."""
    return STATUS_FAULT[status] in (Fault.NONE, Fault.CANDIDATE)


class FailureKind(StrEnum):
    """Why one test failed (the runner's vocabulary: `verifier.runner.protocol.FAILURE_KINDS`)."""

    ASSERTION = "assertion"
    EXCEPTION = "exception"
    CANDIDATE_DIED = "candidate_died"
    TIMEOUT = "timeout"
    OOM = "oom"
    OUTPUT_LIMIT = "output_limit"
    NOT_PLAIN_DATA = "not_plain_data"
    IMPORT_ERROR = "import_error"
    COLLECTION_ERROR = "collection_error"
    SKIPPED = "skipped"
    SYNTAX_ERROR = "syntax_error"
    OVERLOADED = "overloaded"
    INFRA = "infra"
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"


class Counts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    expected: int = Field(0, ge=0, description="Tests the trusted side collected.")
    passed: int = Field(0, ge=0)
    failed: int = Field(0, ge=0)
    errors: int = Field(0, ge=0)
    skipped: int = Field(0, ge=0)


class Failure(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: TrustedLine = Field(
        description="pytest node id of the failing test, or a pseudo id such as '<candidate>'."
    )
    kind: FailureKind
    message: TrustedLine = Field(
        description="Trusted one-line summary, from fixed templates and trusted type names only "
        "(never the candidate's own class names or messages: those are in detail_untrusted)."
    )
    falsifying_example: TrustedLine | None = Field(
        None,
        description="Hypothesis' minimal failing input, on one line, from the note Hypothesis attached "
        "(written from the generated input before the candidate ran).",
    )
    detail_untrusted: UntrustedText = Field(
        "", description="Truncated failure detail; may contain candidate-controlled values."
    )


def is_proven(counts: Counts, failures: Sequence[Failure]) -> bool:
    """What "proven" means, written once: at least one test collected, every one passed, none
    skipped, failed or in error, and no failure recorded."""
    return (
        counts.expected >= 1
        and counts.passed == counts.expected
        and counts.failed == counts.errors == counts.skipped == 0
        and not failures
    )


class LineDifference(BaseModel):
    """Where a program's wrong answer first differs from the expected output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int = Field(ge=1, description="Line number (1-based) in the expected output.")
    output_line: int = Field(ge=1, description="Line number (1-based) in the program's output.")
    expected: TrustedLine = Field(description="That line of the expected output (the suite's text), truncated.")
    got_untrusted: UntrustedText | None = Field(
        description="That line of the program's output (candidate text), truncated; null when the output "
        "ended before it."
    )


class FetchedFile(BaseModel):
    """A file a program suite named in `fetch_files` (compare = "none"), as the sandbox read it
    after the run's last case, before the reset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="The path as the suite named it (relative to the program's folder).")
    sha256: str | None = Field(
        None, description="SHA-256 of the file's bytes (computed by the host); null when not fetched."
    )
    size: int = Field(0, ge=0, description="Bytes of the file; 0 when not fetched.")
    content_b64_untrusted: str | None = Field(
        None, description="The file's bytes (the candidate's), base64; null when not fetched (`error` says why)."
    )
    error: TrustedLine | None = Field(
        None,
        description="Why it is not here: no such file, a symbolic link, not a regular file, not the program's "
        "own, over the result's room for files, or the reset could not vouch for it.",
    )


class CaseOutcome(BaseModel):
    """One case of a program suite (kind = "program"): what the program did with its input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: TrustedLine = Field(description="The case's name in the suite (NAME of cases/NAME.in, or its JSONL name).")
    status: Status = Field(
        description="passed; failed (wrong answer); error (the program exited non-zero or was killed by a "
        "signal); timeout; oom (over the case's memory limit); output_limit; overloaded (the host was too busy)."
    )
    message: TrustedLine = Field(description="Trusted one-line summary, from fixed templates and numbers.")
    ran: bool = Field(True, description="False when the run gave up before this case (the message says why).")
    time_s: float = Field(0.0, ge=0, description="Charged time from the fork to the program's exit (or kill).")
    wall_s: float = Field(
        0.0,
        ge=0,
        description="Wall time from the fork to the program's exit (or kill): time_s plus any wait for a CPU.",
    )
    cpu_s: float = Field(0.0, ge=0, description="CPU time of the program, from the kernel.")
    memory_bytes: int = Field(
        0,
        ge=0,
        description="The largest peak resident memory of any process of the case "
        "(read while it runs, and the kernel's peaks).",
    )
    exit_code: int | None = None
    signal: int | None = Field(None, description="The signal that ended the program, if one did.")
    difference: LineDifference | None = Field(None, description="For a wrong answer: the first differing line.")
    stdout_untrusted: UntrustedText | None = Field(
        None,
        description='compare = "none" only: what the program wrote to stdout, all of it (UTF-8, undecodable bytes '
        "replaced); null for the other modes, whose outputs are compared in the sandbox and never leave it.",
    )
    stderr_untrusted: UntrustedText | None = Field(
        None, description='compare = "none" only: what the program wrote to stderr (as stdout).'
    )
    files: list[FetchedFile] = Field(
        [], description='compare = "none" with fetch_files, the run\'s last case only: one per path named, in order.'
    )


class Durations(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    total_s: float = 0.0
    queue_s: float = Field(0.0, description="Waiting for a sandbox (pool) before the run started.")
    sandbox_s: float = Field(0.0, description="Container create/start/stop/remove overhead.")
    runner_start_s: float = Field(0.0, description="In-container: from launch until pytest started collecting.")
    tests_s: float = Field(0.0, description="In-container: collection and test execution.")
    host_wait_s: float = Field(
        0.0, description="Time the run waited for a CPU on a busy host: not charged against the time limits."
    )


class HypothesisSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    derandomize: bool = True
    max_examples: int = 100
    database: Literal[None] = None


class EnvironmentInfo(BaseModel):
    """The environment image a suite's `requirements` made (built on the sandbox image)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    digest: str = Field(description="sha256 of the requirement lines, the sandbox's pins and the sandbox image id.")
    image_id: str = Field(description="The environment image's id.")
    requirements: list[str] = Field(description="The suite's requirement lines, sorted.")
    packages: list[str] = Field([], description="Every package installed for them, as name==version.")


class CompileInfo(BaseModel):
    """The compile step of a program in a compiled language, before its first case."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool = Field(description="The compiler exited 0 within its limits and left what the cases run.")
    message: TrustedLine = Field(
        description="Why ok is what it is (the compiler's own words are the failure's detail)."
    )
    time_s: float = Field(0.0, ge=0, description="Charged time of the compile step.")
    wall_s: float = Field(0.0, ge=0)
    memory_bytes: int = Field(0, ge=0, description="The largest peak resident memory of any compiler process.")
    exit_code: int | None = None
    signal: int | None = None
    artifact_bytes: int = Field(0, ge=0, description="Bytes of what the cases run (a binary, or Java's classes).")


class ProgramInfo(BaseModel):
    """A program suite's language and the toolchain that ran it (kind = "program")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    language: str = Field(description="python, c, cpp, java, nodejs, go, rust or bash (docs/programs.md).")
    toolchain: list[str] = Field(
        [], description="The image's packages of that language, as name=version (its image's labels)."
    )
    compile: CompileInfo | None = Field(None, description="Compiled languages: the compile step.")


class Evidence(BaseModel):
    """Structured, content-bound result of verifying one candidate against one suite."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    evidence_id: str = Field(description="sha256 over candidate, suite, image and limits.")
    ok: bool = Field(
        description="True only when every collected test (at least one) ran against this candidate and passed."
    )
    status: Status
    fault: Fault = Field(
        Fault.NONE,
        description="Whose doing the status is: none (passed), candidate, input (the caller's), verifier "
        "(our infrastructure) or host (too loaded to judge). Derived from status.",
    )
    reason: TrustedLine = Field(description="One trusted sentence saying why ok is what it is.")
    candidate_sha256: str = Field(
        description="SHA-256 of the candidate file's bytes, or for a candidate folder its tree digest "
        "(verifier.hashing.tree_sha256: files sorted by relative POSIX path, each path and content prefixed "
        "with its length as 8 big-endian bytes); '' only when there were no bytes to read."
    )
    candidate_kind: Literal["file", "tree"] = Field("file", description="A single file, or a folder of modules.")
    suite_sha256: str = Field(description="The suite folder's tree digest (as for a candidate folder).")
    image_id: str = Field(description="Docker image id the run used ('' when none was reached).")
    environment: EnvironmentInfo | None = Field(
        None, description="The suite's packages (suite.toml requirements): the environment image the run used."
    )
    counts: Counts = Counts()
    failures: list[Failure] = []
    limits: Limits
    isolation: Literal["fresh", "reuse"] = Field(
        "fresh",
        description="fresh: a container per candidate; reuse: a reset, reused container (see docs/architecture.md).",
    )
    runner: Runner = Field(
        DEFAULT_RUNNER, description="pytest, or the direct runner for plain test functions (suite.toml runner)."
    )
    candidate_process: CandidateProcess = Field(
        DEFAULT_CANDIDATE_PROCESS,
        description="per-test: every test got a fresh candidate process and scratch space; per-run: one "
        "process served all tests (suite.toml candidate_process).",
    )
    trusted_process: TrustedProcess = Field(
        DEFAULT_TRUSTED_PROCESS,
        description="per-job: the tests ran in a fresh fork of the trusted server; shared: in the server "
        "itself, checked after each job (suite.toml trusted_process).",
    )
    hypothesis: HypothesisSettings = HypothesisSettings()
    kind: SuiteKind = Field(
        DEFAULT_KIND,
        description="tests: a suite of tests calling the candidate's functions; program: cases of input and "
        "expected output for the candidate as a program on stdin/stdout (then `cases` has one outcome each, "
        "and counts count cases).",
    )
    cases: list[CaseOutcome] = Field(
        [], description="kind = program: every case of the suite, in order, with its outcome."
    )
    program: ProgramInfo | None = Field(
        None,
        description="kind = program in a language other than Python: the language, its toolchain and the compile "
        "step (language and toolchain are part of evidence_id).",
    )
    durations: Durations = Durations()
    candidate_output_untrusted: UntrustedText = Field("", description="The candidate's stdout+stderr, truncated.")
    candidate_output_truncated: bool = False
    verifier_version: str
    node: str | None = Field(None, description="The machine (or Ray node) whose sandbox ran the candidate.")
    attempts: int = Field(
        1, ge=1, description="Sandbox runs it took; more than 1 when our infrastructure failed and the run was retried."
    )
    cached: bool = Field(False, description="Served from an evidence store instead of re-running.")
    candidate_is_latest: bool | None = Field(
        None, description="Set by agent tools: whether this candidate is the latest one of the run."
    )

    @model_validator(mode="before")
    @classmethod
    def _fault_from_status(cls, data: Any) -> Any:
        if isinstance(data, dict) and "fault" not in data and "status" in data:
            data = {**data, "fault": STATUS_FAULT[Status(data["status"])]}
        return data

    @model_validator(mode="after")
    def _ok_means_proven(self) -> Evidence:
        if self.fault is not STATUS_FAULT[self.status]:
            raise ValueError(f"status {self.status.value} is the fault of {STATUS_FAULT[self.status].value}")
        proven = self.status is Status.PASSED and is_proven(self.counts, self.failures)
        if self.ok and not proven:
            raise ValueError("ok=true requires status passed, >=1 collected test, all passed, none skipped or failed")
        if self.ok and any(case.status is not Status.PASSED for case in self.cases):
            raise ValueError("ok=true requires every case of a program to have passed")
        if self.status is Status.PASSED and not self.ok:
            raise ValueError("status passed requires ok=true")
        return self

    def to_json(self, *, indent: int | None = 2) -> str:
        """JSON in ASCII: every control or non-ASCII character escaped, so printing it is safe."""
        return json.dumps(self.model_dump(mode="json"), indent=indent, ensure_ascii=True)


def evidence_json_schema() -> dict[str, Any]:
    """The published JSON schema of `Evidence` (what `verifier schema` prints)."""
    schema = Evidence.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://verifier.invalid/schema/evidence-v{SCHEMA_VERSION}.json"
    return schema


def truncate(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [truncated, {len(text) - limit} more chars]"


def dumps_schema() -> str:
    return json.dumps(evidence_json_schema(), indent=2)
