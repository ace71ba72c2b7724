"""The service's wire format: what a client sends and what it gets back.

Pydantic models only (the OpenAPI document is made from them), shared by the server and
`verifier.client`, so this module imports nothing of the serve extra. Evidence travels as the
`verifier.evidence.Evidence` model itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from verifier.evidence import Evidence

#: Longest client item id of a batch.
MAX_ITEM_ID = 200
#: What every error answer's `error` says (its HTTP status in brackets).
ErrorCode = Literal[
    "unauthorized",  # 401: no token, or not a token the server knows
    "forbidden",  # 403: the token may not do this
    "not_found",  # 404: no such suite or evidence (or not the caller's)
    "conflict",  # 409: the suite's digest is not the one the caller pinned
    "invalid",  # 400/422: the request is malformed
    "too_large",  # 413 (431): the body (the headers) over the server's limit
    "slow_client",  # 408: the body did not arrive within the server's deadline
    "rate_limited",  # 429: over the token's rate
    "concurrency",  # 429: over the token's concurrent checks
    "quota",  # 429: the token's daily quota is spent
    "overloaded",  # 503: the machine could not start the work in time
    "shutting_down",  # 503: the server is stopping
]


class ErrorBody(BaseModel):
    """Every refusal: a short code and one trusted sentence saying why and what to do."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorCode
    reason: str


class SuiteByName(BaseModel):
    """A suite the server registered (its configuration file; `GET /v1/suites` lists them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=500, description="The suite's registered name.")
    sha256: str | None = Field(
        None,
        pattern="^[0-9a-f]{64}$",
        description="The suite digest the caller expects: the check is refused (409) when the registered "
        "suite has another one.",
    )


class InlineSuite(BaseModel):
    """A suite sent with the request (only for tokens allowed to: its tests are trusted code).
    Always run in a container of its own, never in a reused one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: dict[str, str] = Field(
        min_length=1, description="Relative POSIX path -> UTF-8 text: test files, suite.toml, cases."
    )
    name: str = Field("inline", min_length=1, max_length=200, description="A name for reports.")


class ExtractOptions(BaseModel):
    """Take the candidate's code out of a model's chat answer first (`verifier.extract`): the last
    fenced Python block that parses, or the whole text when it is code, `<think>` dropped. An
    answer with no code is `invalid_input` (the answer's fault), never run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entry_point: str | None = Field(
        None,
        max_length=200,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Keep only the imports and what this function or class needs (EvalPlus's sanitize); "
        "top-level calls and prints are dropped.",
    )
    prompt: str = Field(
        "",
        description="The text the answer goes on from (HumanEval's prompt): prompt + answer is the code when "
        "that is Python; else the answer's code is taken, with the prompt's imports before it.",
    )


class CheckRequest(BaseModel):
    """One candidate against one suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candidate: str | dict[str, str] = Field(
        description="The candidate: its source (the module the suite imports), or a folder of modules as "
        "relative POSIX path -> UTF-8 text."
    )
    suite: str | SuiteByName | InlineSuite = Field(
        description="A registered suite's name (or {name, sha256} to pin its digest), or an inline suite."
    )
    extract: ExtractOptions | None = Field(
        None,
        description="The candidate is a model's answer (one text): check the code taken out of it "
        "(`{}` for the defaults).",
    )


class BatchItem(CheckRequest):
    """A check of a batch, with the caller's id for it (echoed on its result line)."""

    id: str = Field(min_length=1, max_length=MAX_ITEM_ID, description="The caller's id of this item (unique).")


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    items: list[BatchItem] = Field(min_length=1)


class BatchLine(BaseModel):
    """One line of a batch's NDJSON answer, in the order the checks finish."""

    model_config = ConfigDict(extra="forbid")

    id: str
    evidence: Evidence


class SuiteInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str
    kind: Literal["tests", "program"]


class Health(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "stopping"]
    version: str
    backend: str = Field(description="local (this machine's engine) or ray (a Ray cluster).")
    policy: str
    slots: int = Field(description="Machine-wide sandbox slots (shared with every verifier on this machine).")


# -- SandboxFusion's /run_code ------------------------------------------------------------------
class RunCodeRequest(BaseModel):
    """SandboxFusion's `RunCodeRequest` (the fields verl's reward code sends): a program in Python,
    C, C++, Java, JavaScript (Node.js), Go, Rust or Bash; `args` must be empty (docs/serve.md has
    the table)."""

    model_config = ConfigDict(extra="ignore")

    compile_timeout: float = Field(
        10,
        description="Compiled languages (c, cpp, java, go, rust): seconds the compile step may take (charged "
        "time, more than 0), past the server's max_compile_timeout_s that limit; ignored for python, nodejs "
        "and bash.",
    )
    run_timeout: float = Field(
        10,
        gt=0,
        description="Seconds the program may run (charged time: a wait for a CPU is not counted); past the "
        "server's max_run_timeout_s, that limit.",
    )
    memory_limit_MB: int = Field(-1, description="Peak memory of the program in MiB; -1: the server's default.")
    code: str = Field(description="The program's source (Python: run as __main__).")
    stdin: str | None = Field(None, description="What the program reads on stdin.")
    language: str = Field(
        description="SandboxFusion's names: python (or python3), cpp, java, nodejs (or javascript), go, rust, "
        "bash; also c. Others are refused (400). docs/programs.md has each language's compiler and commands."
    )
    files: dict[str, str | None] = Field(
        {},
        description="Python only: relative path -> base64 content (null: skipped), written beside the program "
        "(which is solution.py then) before it runs; at most 100 files, 8 MiB decoded. A program in another "
        "language is one file: files are refused (400).",
    )
    fetch_files: list[str] = Field(
        [],
        description="Files (paths in the program's folder, at most 32) read back after the run, before the "
        "sandbox is reset: the answer's `files` has each one read, base64 (docs/serve.md).",
    )
    args: list[str] = Field([], description="Not supported: must be empty.")


class CommandRunResult(BaseModel):
    """SandboxFusion's `CommandRunResult`."""

    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = Field(
        None, description="Wall seconds the program ran (the evidence has its charged time)."
    )
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    """SandboxFusion's `RunCodeResponse`, plus the id of the evidence behind it. `compile_result`
    is the compile step of a compiled language (null for python, nodejs, bash); a program that
    did not compile has it and no `run_result`."""

    status: Literal["Success", "Failed", "SandboxError"]
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = {}
    evidence_id: str | None = Field(None, description="Ours: GET /v1/evidence/{evidence_id} gives the evidence.")
