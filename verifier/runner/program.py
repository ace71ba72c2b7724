"""The trusted side of a program job: run every case of a suite against the candidate as a
program on stdin/stdout, and judge each output. Run by the trusted child instead of the tests
when the job's kind is "program" (see trusted.run_job).

Per case:

1. the zygote forks a process from its already-started interpreter, which becomes the
   candidate's uid and runs the source as `__main__` (`program_exec.py`) on three pipes made
   here; the case's input and expected output never leave this process (the suite is in
   /run/trusted, mode 0700, another uid);
2. this side feeds stdin, drains stdout and stderr with caps, and ends the case on its charged
   clock (`time_limit_s`), on memory (`memory_bytes`: the largest of any candidate process, read
   from /proc while it runs and from the kernel's peaks when it ends), or on output beyond the
   cap. The program is every process of the case: it ends when the main process has exited and
   stdout and stderr are closed (a child still writing keeps it, and its clock, running);
3. the zygote reaps it (exit code or signal, CPU time, peak memory), then resets the candidate
   side (every process of the candidate's uid killed, every place it can write wiped): no case
   sees another's processes or files;
4. the output is compared here, outside the candidate's process (`cases.py`).

compare = "none" suites may name files to fetch (`fetch_files`): the reset after the last case
reads them (as the candidate's uid, every candidate process dead, no link followed: `reset.fetch`)
before it wipes, within the result line's room for them (`fetch_bytes`), and they come back in
that case's record (base64).

After MAX_TIMEOUTS cases that ran out of time, or once the run's own time limit is spent, the
remaining cases are not run (each is recorded as such): the verdict is a timeout either way.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from .case_process import CaseProcess, CaseRun
from .cases import Case, Checker, Judgement, checker_from_source, compare, load_cases, run_checker
from .clock import ChargedClock
from .languages import BUILD_DIR, LANGUAGES
from .progress import Progress
from .protocol import (
    MAX_DETAIL,
    MAX_FAILURES,
    OVERLOAD_FACTOR,
    SUITE_DIR,
    CaseRecord,
    CompileRecord,
    FailureRecord,
    FetchedRecord,
    JobConfig,
    JobCounts,
    JobHeader,
    JobResult,
    ProgramConfig,
    ProtocolError,
    fetch_bytes,
    kept_output_bytes,
    tree,
    untree,
)
from .proxy import MAX_TIMEOUTS, SandboxFailure, control, oom_kills

#: Bytes of a case's stderr kept for its failure's detail.
STDERR_KEEP = 2000
#: Bytes of stderr, over all cases, kept as the run's candidate output (evidence shows 4,000 characters).
STDERR_LOG = 16 * 1024
#: Most bytes of a compiled program's artifact (the binary, or Java's class files, as the
#: protocol's JSON tree, base64: 4/3 of the files): more is a compile_error. The trusted side holds
#: it about three times over while it checks and hands it on, within its 128 MiB reserve; no one
#: file is over the sandbox's file size limit (16 MiB by default) anyway.
ARTIFACT_BYTES = 24 * 1024**2
#: Bytes of the compiler's messages kept (the rest is counted and said to be cut).
COMPILE_MESSAGE_BYTES = 16 * 1024


def _suite_files(root: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                files[os.path.relpath(path, root).replace(os.sep, "/")] = fh.read()
    return files


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stderr_detail(run: CaseRun) -> str:
    text = run.stderr.decode("utf-8", "replace")
    if run.err_total > len(run.stderr):
        text += f"\n... [{run.err_total - len(run.stderr)} more bytes of stderr]"
    lines = text.rstrip("\n").splitlines()
    if lines:  # the last line (an exception's) the way a failure shows it
        lines[-1] = f"E   {lines[-1]}"
    return "\n".join(lines)[-MAX_DETAIL:]


@dataclass(frozen=True)
class _Outcome:
    record: CaseRecord
    detail: str


def _outcome(
    case: Case, run: CaseRun, config: ProgramConfig, judge: Callable[[Case, bytes], Judgement], cap: int
) -> _Outcome:
    status = run.status
    raw_exit, raw_sig, raw_rss, raw_cpu = (status.get(k) for k in ("exit_code", "signal", "max_rss_kb", "cpu_s"))
    exit_code = raw_exit if isinstance(raw_exit, int) else None
    sig = raw_sig if isinstance(raw_sig, int) else None
    rss = max(raw_rss * 1024 if isinstance(raw_rss, int) else 0, run.peak_bytes)
    cpu = float(raw_cpu) if isinstance(raw_cpu, (int, float)) else 0.0
    limit_mib = config.memory_bytes / 1024**2
    base = {
        "name": case.name,
        "time_s": round(run.time_s, 4),
        "wall_s": round(run.wall_s, 4),
        "cpu_s": round(cpu, 4),
        "memory_bytes": rss,
        "exit_code": exit_code,
        "signal": sig,
    }
    stderr = _stderr_detail(run)
    # compare = "none": what the program wrote comes back with every outcome.
    kept: dict[str, object] = {}
    if config.compare == "none":
        kept = {
            "stdout_b64": base64.b64encode(bytes(run.stdout)).decode(),
            "stderr_b64": base64.b64encode(bytes(run.stderr)).decode(),
            "stderr_bytes": run.err_total,
        }

    def record(outcome: str, summary: str, detail: str = stderr, **extra: object) -> _Outcome:
        extra = {**kept, **extra}
        return _Outcome(CaseRecord(outcome=outcome, summary=summary, **base, **extra), detail)  # type: ignore[arg-type]

    if run.ended == "output_limit":
        return record("output_limit", f"the program wrote more than {cap} bytes to stdout or stderr")
    if run.ended == "overloaded":
        return record(
            "overloaded",
            f"the host was too busy: the case waited for a CPU past {OVERLOAD_FACTOR:g}x its "
            f"{config.time_limit_s:g} s limit",
        )
    if run.ended == "timeout" or run.time_s > run.time_limit_s or sig == signal.SIGXCPU:
        return record("timeout", f"the program did not finish within the {config.time_limit_s:g} s time limit")
    if run.ended == "oom" or run.oom_killed or rss > config.memory_bytes:
        return record("oom", f"the program used more than its {limit_mib:g} MiB memory limit")
    if sig is not None:
        return record("runtime_error", f"the program was killed by {_signal_name(sig)}")
    if exit_code != 0:
        how = f"exited with code {exit_code}" if exit_code is not None else "ended in an unknown way"
        return record("runtime_error", f"the program {how}")
    verdict = judge(case, bytes(run.stdout))
    if verdict.ok:
        return record("passed", verdict.summary, detail="", **kept)
    got = verdict.got_line
    if verdict.detail:
        detail = "\n".join(f"E   checker: {line}" for line in verdict.detail.splitlines()[:20])
    else:
        detail = f"E   line {verdict.output_line} of the output: {got}" if got is not None else ""
    return record(
        "wrong_answer",
        verdict.summary,
        detail=detail,
        line=verdict.line,
        output_line=verdict.output_line,
        expected_line=verdict.expected_line,
        got_line_untrusted=got,
    )


def _judge(config: ProgramConfig, files: dict[str, bytes]) -> Callable[[Case, bytes], Judgement]:
    if config.compare == "none":
        return lambda case, output: Judgement(True, "the program exited 0 (no output is compared)")
    if config.compare == "checker":
        assert config.checker is not None
        check: Checker = checker_from_source(files[config.checker], f"{SUITE_DIR}/{config.checker}")
        return lambda case, output: run_checker(check, case, output)
    mode, abs_tol, rel_tol = config.compare, config.abs_tol, config.rel_tol
    return lambda case, output: compare(mode, case.output, output, abs_tol=abs_tol, rel_tol=rel_tol)


@dataclass(frozen=True)
class _Compiled:
    record: CompileRecord
    #: The failure's kind when it did not compile: compile_error (the candidate's) or overloaded.
    kind: str = ""
    #: The compiler's messages (candidate text: they quote its source).
    detail: str = ""


def _compile(ctl: socket.socket, program: ProgramConfig, clock: ChargedClock, left_s: float) -> _Compiled:
    """The compile step of a program in a compiled language (languages.py), as the candidate's
    user in a process of its own, on the charged clock with its own limits (`compile_timeout_s`,
    `compile_memory_bytes`, ARTIFACT_BYTES): the zygote's child runs the compiler and sends back
    what it left (program_exec.compile_program). The artifact is checked here and handed to the
    zygote, which writes it beside the source for every case; the reset after the step wipes the
    rest (objects, caches, anything the compiler left in /tmp)."""
    limit_s = min(program.compile_timeout_s, left_s)
    settings = replace(program, memory_bytes=program.compile_memory_bytes, time_limit_s=program.compile_timeout_s)
    runner = CaseProcess(ctl, settings, clock, ARTIFACT_BYTES, COMPILE_MESSAGE_BYTES, op="compile")
    run = runner.run(Case(name="<compile>", input=b"", output=b""), limit_s)
    raw_exit, raw_sig, raw_rss = (run.status.get(k) for k in ("exit_code", "signal", "max_rss_kb"))
    exit_code = raw_exit if isinstance(raw_exit, int) else None
    sig = raw_sig if isinstance(raw_sig, int) else None
    rss = max(raw_rss * 1024 if isinstance(raw_rss, int) else 0, run.peak_bytes)
    messages = run.stderr.decode("utf-8", "replace")
    if run.err_total > len(run.stderr):
        messages += f"\n... [{run.err_total - len(run.stderr)} more bytes of compiler output]"
    messages = messages[-MAX_DETAIL:]

    def made(ok: bool, summary: str, kind: str = "compile_error", artifact_bytes: int = 0) -> _Compiled:
        record = CompileRecord(
            language=program.language,
            ok=ok,
            summary=summary,
            time_s=round(run.time_s, 4),
            wall_s=round(run.wall_s, 4),
            memory_bytes=rss,
            exit_code=exit_code,
            signal=sig,
            artifact_bytes=artifact_bytes,
        )
        return _Compiled(record, "" if ok else kind, "" if ok else messages)

    limit_mib = program.compile_memory_bytes / 1024**2
    if not run.reset_ok:
        raise SandboxFailure("the compile step left processes or files that could not be removed")
    if run.ended == "overloaded":
        why = f"the host was too busy: the compile step waited for a CPU past {OVERLOAD_FACTOR:g}x its limit"
        return made(False, why, kind="overloaded")
    if run.ended == "timeout" or run.time_s > limit_s or sig == signal.SIGXCPU:
        return made(False, f"the program did not compile within the {limit_s:g} s compile time limit")
    if run.ended == "oom" or run.oom_killed or rss > program.compile_memory_bytes:
        return made(False, f"the compiler used more than its {limit_mib:g} MiB memory limit")
    if run.ended == "output_limit":
        if run.out_total > ARTIFACT_BYTES:
            return made(False, f"the compiled program is over the {ARTIFACT_BYTES // 1024**2} MiB limit")
        return made(False, f"the compiler wrote more than {ARTIFACT_BYTES} bytes of messages")
    if sig is not None or exit_code != 0:
        how = f"exited with code {exit_code}" if exit_code is not None else f"was killed by {_signal_name(sig or 0)}"
        return made(False, f"the program did not compile: the compiler {how}")
    try:
        artifact = untree(bytes(run.stdout))
    except (ProtocolError, ValueError, KeyError, TypeError) as exc:
        raise SandboxFailure("the compile step's artifact could not be read") from exc
    if any(not rel.startswith(f"{BUILD_DIR}/") for rel in artifact):
        raise SandboxFailure("the compile step's artifact is outside its build directory")
    runs = [rel for rel in artifact if rel.endswith(".class")] if program.language == "java" else []
    if not (runs or f"{BUILD_DIR}/main" in artifact):
        return made(False, "the compiler exited 0 but left nothing to run")
    memfd = os.memfd_create("artifact")
    try:
        view = memoryview(tree(artifact))
        while view:
            view = view[os.write(memfd, view) :]
        os.lseek(memfd, 0, os.SEEK_SET)
        control(ctl, {"op": "add"}, [memfd])
    finally:
        os.close(memfd)
    size = sum(len(data) for data in artifact.values())
    return made(True, f"compiled in {run.time_s:.2f} s ({size} bytes to run)", artifact_bytes=size)


def _not_run(case: Case, outcome: str, summary: str) -> _Outcome:
    return _Outcome(CaseRecord(name=case.name, outcome=outcome, summary=f"not run: {summary}", ran=False), "")


def run_program(header: JobHeader, ctl: socket.socket, progress: Progress | None = None) -> tuple[JobResult, bool]:
    """Run a program job's cases against the loaded candidate. Returns (result, trouble)."""
    config = header.config
    program = config.program
    if program is None:
        raise ValueError("a program job without its [program] settings")
    t_start = time.monotonic()
    files = _suite_files(SUITE_DIR)
    cases = load_cases(files, program.cases)
    judge = _judge(program, files)
    clock = ChargedClock()
    output_cap = config.output_bytes
    stderr_keep = STDERR_KEEP
    if program.compare == "none":  # every byte written comes back: each case gets its share
        output_cap = stderr_keep = kept_output_bytes(config.output_bytes, len(cases))
    compiled: _Compiled | None = None
    if LANGUAGES[program.language].compiled:
        compiled = _compile(ctl, program, clock, config.budget_s)
        if not compiled.record.ok:
            return _not_compiled(config, cases, compiled, time.monotonic() - t_start, clock), False
    runner = CaseProcess(ctl, program, clock, output_cap, stderr_keep)
    outcomes: list[_Outcome] = []
    timeouts = 0
    trouble = False
    stop: tuple[str, str] | None = None
    oom_before = oom_kills()
    stderr_log = bytearray()
    stderr_total = 0
    progress = progress or Progress()
    progress.collected(len(cases))
    for case in cases:
        left = config.budget_s - clock.charged()
        if stop is None and left <= 0:
            stop = ("timeout", f"the run's {config.budget_s:g} s time limit ran out")
        if stop is not None:
            outcomes.append(_not_run(case, *stop))
            progress.one_done()
            continue
        last = case is cases[-1]
        fetch = program.fetch_files if last and program.compare == "none" else ()
        run = runner.run(case, min(program.time_limit_s, left), fetch, fetch_bytes(config.output_bytes))
        outcome = _outcome(case, run, program, judge, output_cap)
        if fetch:
            outcome = _Outcome(replace(outcome.record, files=run.fetched), outcome.detail)
        if outcome.record.outcome == "timeout" and program.time_limit_s > left:
            summary = f"the run's {config.budget_s:g} s time limit ran out during this case"
            outcome = _Outcome(replace(outcome.record, summary=summary), outcome.detail)
        outcomes.append(outcome)
        if run.err_total:
            label = f"[case {case.name}] ".encode()
            # What the log would hold uncut: the host compares it with the log to say it was cut.
            stderr_total += len(label) + run.err_total
            if len(stderr_log) < STDERR_LOG:
                stderr_log += label + bytes(run.stderr[: STDERR_LOG - len(stderr_log)])
        if outcome.record.outcome in ("timeout", "overloaded"):
            timeouts += 1
            if timeouts >= MAX_TIMEOUTS:
                stop = (outcome.record.outcome, f"the program already exceeded a time limit {timeouts} times")
        if not run.reset_ok:
            trouble = True
            stop = ("runtime_error", "the program left processes or files that could not be removed")
            if outcome.record.outcome == "passed":
                outcomes[-1] = _Outcome(replace(outcome.record, outcome="runtime_error", summary=stop[1]), "")
        progress.one_done()
    if program.fetch_files and program.compare == "none" and outcomes and not outcomes[-1].record.ran:
        why = "not fetched: the run's last case did not run"
        unread = [FetchedRecord(path=p, error=why) for p in program.fetch_files]
        outcomes[-1] = _Outcome(replace(outcomes[-1].record, files=unread), outcomes[-1].detail)
    clock.tick(force=True)
    # A kill by the container's OOM killer may have touched more than the program: a sandbox
    # that saw one is not reused. (A case ended here for its own memory limit is routine, as
    # are time limits: the reset after every case checked that nothing was left.)
    oom = oom_kills() > oom_before >= 0
    output = stderr_log.decode("utf-8", "replace")
    result = _result(config, outcomes, output, stderr_total, time.monotonic() - t_start, clock.credit, oom)
    if compiled is not None:
        result = replace(result, compile=compiled.record)
    return result, trouble or oom


def _not_compiled(
    config: JobConfig, cases: list[Case], compiled: _Compiled, tests_s: float, clock: ChargedClock
) -> JobResult:
    """The result of a program that did not compile: no case ran; one failure names why, with the
    compiler's messages as its untrusted detail."""
    clock.tick(force=True)
    kind = compiled.kind
    summary = compiled.record.summary
    outcome = "compile_error" if kind == "compile_error" else "overloaded"
    records = [_not_run(case, outcome, summary).record for case in cases]
    failure = FailureRecord(test_id="<compile>", kind=kind, summary=summary, detail_untrusted=compiled.detail)
    return JobResult(
        runner=config.runner,
        exit_code=1,
        counts=JobCounts(expected=len(records), passed=0, failed=len(records)),
        failures=[failure],
        failures_total=1,
        tests_s=tests_s,
        host_wait_s=clock.credit,
        kind="program",
        cases=records,
        compile=compiled.record,
    )


def _result(
    config: JobConfig,
    outcomes: list[_Outcome],
    output: str,
    output_bytes: int,
    tests_s: float,
    wait_s: float,
    oom: bool,
) -> JobResult:
    """The job's result from its cases' outcomes (in order)."""
    failed = [o for o in outcomes if o.record.outcome != "passed"]
    # Lines of text only for the failures reported in full: the result line stays bounded
    # however many cases a candidate gets wrong.
    keep = {id(o) for o in failed[:MAX_FAILURES]}
    records = [
        o.record
        if id(o) in keep or o.record.outcome == "passed"
        else replace(o.record, expected_line=None, got_line_untrusted=None)
        for o in outcomes
    ]
    failures = [
        FailureRecord(
            test_id=f"case {o.record.name}",
            kind=o.record.outcome,
            summary=o.record.summary,
            detail_untrusted=o.detail,
        )
        for o in failed[:MAX_FAILURES]
    ]
    return JobResult(
        runner=config.runner,
        exit_code=0 if not failed else 1,
        counts=JobCounts(expected=len(records), passed=len(records) - len(failed), failed=len(failed)),
        failures=failures,
        failures_total=len(failed),
        candidate_output=output,
        candidate_output_bytes=output_bytes,
        tests_s=tests_s,
        host_wait_s=wait_s,
        kind="program",
        cases=records,
        oom=oom,
    )
