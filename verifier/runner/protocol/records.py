"""What a job's result is made of: failures, counts, program cases, and the result itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from .kernel import observed_kernel


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
class FetchedRecord:
    """One file a program suite named to fetch (`ProgramConfig.fetch_files`), as the trusted side
    read it after the case, before the reset: its content (base64, the candidate's bytes), or
    why it is not here (`error`, from fixed templates: missing, not a regular file, a link, over
    the byte budget, ...)."""

    path: str
    b64: str | None = None
    #: Bytes of the file (0 when it was not read).
    size: int = 0
    error: str | None = None


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
    #: The files fetched after this case (the run's last), one record per path asked for, in order.
    files: list[FetchedRecord] = field(default_factory=list)


@dataclass(frozen=True)
class CompileRecord:
    """The compile step of a program in a compiled language (languages.py), before its first case.
    Written by trusted code: the compiler's own message is the failure's `detail_untrusted`."""

    language: str
    #: The compiler exited 0 within its limits and left its artifact.
    ok: bool
    #: From fixed templates and numbers only.
    summary: str
    #: Charged time from the fork to the compiler's end; wall time beside it.
    time_s: float = 0.0
    wall_s: float = 0.0
    #: The largest peak resident memory of any process of the compile step.
    memory_bytes: int = 0
    exit_code: int | None = None
    signal: int | None = None
    #: Bytes of what the cases run (the binary, or Java's class files).
    artifact_bytes: int = 0


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
    #: A program in a compiled language: its compile step (None for Python and interpreted languages).
    compile: CompileRecord | None = None
    #: The kernel the trusted side observed while it made this result (KERNELS): the host
    #: refuses a result whose kernel is not the one its runtime runs (`sandbox.runtime`).
    kernel: str = field(default_factory=observed_kernel)
