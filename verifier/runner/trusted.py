"""The trusted side: a small job server that runs suites with pytest and Hypothesis.

Runs as the trusted user. The server imports pytest, Hypothesis and the harness once, says
READY, then for each job on stdin (see protocol/): hands the zygote the candidate's source,
writes the suite, forks a trusted child that runs the tests, writes exactly one result line on
the container's stdout, which only this process holds, then resets the candidate side and says
READY again.
The candidate lives in other processes under another uid (see proxy.py), so nothing it does
can patch pytest, Hypothesis or this reporter, or reach the result channel. Every wait here
has a deadline.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable

from . import direct, protocol, trees
from .clock import ChargedClock, sandbox_cpu_s, sandbox_cpus, starved_now
from .pristine import Pristine
from .progress import Progress
from .protocol import (
    IMAGE_MODULES,
    OVERLOAD_FACTOR,
    SUITE_DIR,
    TRUSTED_DIR,
    FailureRecord,
    JobCounts,
    JobHeader,
    JobResult,
)
from .proxy import CandidateModule, CandidateSession, SandboxFailure, control, oom_kills
from .reaper import Reaper, in_child
from .results import Results
from .suite_files import pytest_ini

#: The server gives a job's trusted child this long past its run's wall-clock backstop.
SERVER_GRACE_S = 15.0


def _write_suite(files: dict[str, bytes], root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
    for rel, data in sorted(files.items()):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)


def _pytest(recorder: Results) -> int:
    import pytest

    return int(
        pytest.main(
            [
                SUITE_DIR,
                "-c",
                f"{TRUSTED_DIR}/pytest.ini",
                "--rootdir",
                SUITE_DIR,
                # No terminal reporter: half the cost of a run, and reports carry all we use.
                "-p",
                "no:terminal",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:pastebin",
                "-p",
                "no:legacypath",
                "-W",
                "ignore::pytest.PytestUnraisableExceptionWarning",
            ],
            plugins=[recorder],
        )
    )


def run_job(header: JobHeader, ctl: socket.socket, progress: Progress | None = None) -> tuple[JobResult, bool]:
    """Run one job's suite against the loaded candidate. Returns (result, trouble)."""
    config = header.config
    if config.kind == "program":  # cases on stdin/stdout instead of tests (program.py)
        from .program import run_program

        return run_program(header, ctl, progress)
    clock = ChargedClock()
    session = CandidateSession(
        ctl,
        call_timeout=config.call_timeout_s,
        budget=config.budget_s,
        output_cap=config.output_bytes,
        reply_limit=config.reply_bytes,
        per_test=config.candidate_process == "per-test",
        clock=clock,
    )
    shadowing = [m for m in header.modules if _taken(m)]
    if shadowing:
        # Refused before any test runs: a suite that never touches the candidate must not pass.
        summary = (
            "the candidate has a module named like one the tests themselves use (the standard library, "
            "pytest, Hypothesis, the suite's own), which it may not replace"
        )
        return _refused(config, summary, f"module {shadowing[0]!r}"), False
    for name in header.modules:
        sys.modules[name] = CandidateModule(name, session)
    if config.uses_hypothesis:
        from hypothesis import HealthCheck, Phase, settings

        settings.register_profile(
            "verifier",
            derandomize=True,
            database=None,
            deadline=None,  # wall-clock deadlines make verdicts load-dependent; hangs hit call_timeout_s
            max_examples=config.max_examples,
            suppress_health_check=[HealthCheck.too_slow],
            print_blob=False,
            # Every phase but `explain`: it reruns a failing test many times over to say which
            # parts of the input did not matter, which costs each wrong candidate seconds and adds
            # nothing to the verdict or the falsifying example (shrinking still runs).
            phases=[p for p in Phase if p is not Phase.explain],
        )
        settings.load_profile("verifier")
    t_tests = time.monotonic()
    try:
        if config.runner == "direct":
            recorder = Results(session, progress)
            exit_code = direct.run(recorder)
        else:
            from .pytest_plugin import PytestResults

            recorder = PytestResults(session, progress)
            exit_code = _pytest(recorder)
    finally:
        session.output.catch_up()
        session.close()
    clock.tick(force=True)
    blocked = session.blocked
    # A process killed for memory: the cgroup was at its limit, so start the next run afresh.
    trouble = session.trouble or "oom" in recorder.kinds
    return (
        JobResult(
            runner=config.runner,
            exit_code=exit_code,
            counts=recorder.counts(),
            failures=recorder.failures,
            failures_total=recorder.failures_total,
            import_failed=blocked is not None and blocked.kind == "import_error",
            calls=session.calls,
            candidate_output=session.output.buffer.decode("utf-8", "replace"),
            candidate_output_bytes=session.output.total,
            tests_s=time.monotonic() - t_tests,
            host_wait_s=clock.credit,
        ),
        trouble,
    )


def _taken(module: str) -> bool:
    """Whether `module`'s top-level package is one the trusted side can import itself, or one the
    sandbox or the suite folder defines. The host refuses such a candidate before it runs
    (`trees.module_conflict`, with folded names and the suite's imports too); this is defence in
    depth, exact names only."""
    top = module.split(".")[0]
    return (
        top in sys.modules
        or top in trees.STDLIB_MODULES
        or top in IMAGE_MODULES
        or top in trees.SPECIAL_MODULES
        or os.path.lexists(os.path.join(SUITE_DIR, top))
        or os.path.lexists(os.path.join(SUITE_DIR, f"{top}.py"))
        or importlib.util.find_spec(top) is not None
    )


def _refused(config: protocol.JobConfig, summary: str, detail: str) -> JobResult:
    """The result of a candidate refused before any test ran (`summary`: trusted words)."""
    record = FailureRecord(
        test_id="<candidate>", kind="import_error", summary=protocol.summary_line(summary), detail_untrusted=detail
    )
    return JobResult(
        runner=config.runner, exit_code=1, counts=JobCounts(), failures=[record], failures_total=1, import_failed=True
    )


def _failed_run(kind: str, summary: str, *, oom: bool = False, error: str | None = None) -> JobResult:
    return JobResult(
        runner="pytest",
        exit_code=-1,
        counts=JobCounts(),
        failures=[FailureRecord(test_id="<run>", kind=kind, summary=summary)],
        failures_total=1,
        oom=oom,
        sandbox_error=error,
    )


def _run_child(header: JobHeader, ctl: socket.socket, reaper: Reaper, progress: Progress) -> tuple[JobResult, bool]:
    """Run the job in a forked trusted child, within a wall-clock backstop; (result, trouble)."""
    oom_before = oom_kills()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the trusted child: runs this job's tests, then exits
        in_child()
        os.close(read_end)
        try:
            try:
                result, trouble = run_job(header, ctl, progress)
            except SandboxFailure as exc:
                result, trouble = _failed_run("infra", exc.summary, error=exc.summary), True
            except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
                summary = f"the trusted runner failed ({exc.__class__.__name__})"
                result, trouble = _failed_run("infra", summary, error=summary), True
            with os.fdopen(write_end, "w") as fh:
                json.dump({"result": protocol.plain(result), "trouble": trouble}, fh)
        finally:
            os._exit(0)
    os.close(write_end)
    config = header.config
    deadline = time.monotonic() + max(config.budget_s, config.call_timeout_s) * OVERLOAD_FACTOR + SERVER_GRACE_S
    chunks: list[bytes] = []
    killed = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        if select.select([read_end], [], [], remaining)[0]:
            chunk = os.read(read_end, 1 << 16)  # a pipe holds 64 KiB: asking for more only allocates more
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    status = reaper.wait(pid)
    if killed:
        if starved_now(sandbox_cpu_s, sandbox_cpus()):
            return _failed_run("overloaded", "the host was too busy: the tests did not finish in time"), True
        return _failed_run("timeout", "the tests did not finish within the run's wall-clock backstop"), True
    try:
        message = json.loads(b"".join(chunks))
        return protocol.parse_result(json.dumps(message["result"]).encode(), max_bytes=1 << 40), bool(
            message["trouble"]
        )
    except (ValueError, KeyError, TypeError, protocol.ProtocolError):
        if oom_kills() > oom_before >= 0:
            return _failed_run("oom", "a process of the run was killed for running out of memory", oom=True), True
        summary = f"the trusted runner died (wait status {status})"
        return _failed_run("infra", summary, error=summary), True


def _run_here(header: JobHeader, ctl: socket.socket, progress: Progress) -> tuple[JobResult, bool]:
    """Run the job in this process (trusted_process = "shared"; see pristine.py); (result, trouble).
    No backstop here: a job that hangs is ended by the host's deadline, with its sandbox."""
    try:
        return run_job(header, ctl, progress)
    except SandboxFailure as exc:
        return _failed_run("infra", exc.summary, error=exc.summary), True
    except BaseException as exc:  # noqa: BLE001 - report, and take no other job
        summary = f"the trusted runner failed ({exc.__class__.__name__})"
        return _failed_run("infra", summary, error=summary), True


def _serve_one(
    header: JobHeader,
    candidate: dict[str, bytes],
    files: dict[str, bytes],
    ctl: socket.socket,
    reaper: Reaper,
    progress: Progress,
) -> tuple[JobResult, bool]:
    problem = trees.tree_problem(candidate)
    if problem is not None:  # the host refuses such a tree before it is hashed; defence in depth
        why = f"the candidate's folder is not canonical: it has {problem[0]}"
        return _refused(header.config, why, trees.shown(problem[1])), False
    memfd = os.memfd_create("candidate")
    try:
        view = memoryview(protocol.tree(candidate))
        while view:
            view = view[os.write(memfd, view) :]
        os.lseek(memfd, 0, os.SEEK_SET)
        program = header.config.program
        told = {"language": program.language, "memory_mib": program.memory_bytes // 1024**2} if program else {}
        control(ctl, {"op": "load", "modules": header.modules, "program": told}, [memfd])
    finally:
        os.close(memfd)
    _write_suite(files, SUITE_DIR)
    if header.config.trusted_process == "shared":
        return _run_here(header, ctl, progress)
    return _run_child(header, ctl, reaper, progress)


def _reset(ctl: socket.socket, reaper: Reaper, meanwhile: Callable[[], object] | None = None) -> bool:
    """Kill every candidate process and wipe the candidate's writable places; `meanwhile` runs
    here while the zygote resets."""
    try:
        reply = control(ctl, {"op": "reset"}, meanwhile=meanwhile)
    except SandboxFailure as exc:
        reply = {"ok": False, "error": exc.summary}
    # Orphans of candidate processes come here under gVisor (no subreaper but PID 1); `reaper`
    # waited for each as it ended, during the job and the reset. Their statuses are of no use.
    reaper.forget()
    if not reply.get("ok"):
        print(f"verifier-runner: the candidate side was not reset: {reply}", file=sys.stderr, flush=True)
    return bool(reply.get("ok"))


def _option(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def serve(ctl: socket.socket, argv: list[str]) -> None:
    """Serve up to --max-jobs jobs from stdin; --preload names modules to import before READY."""
    max_jobs = int(_option(argv, "--max-jobs", "1"))
    preload = _option(argv, "--preload", protocol.PYTEST_PRELOAD)
    # Our stdout is the result channel: keep it for result lines, and send everything else
    # this process or pytest prints to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(f"{TRUSTED_DIR}/pytest.ini", "w") as fh:
        fh.write(pytest_ini())
    # Warm up: what jobs need is imported before the first job arrives.
    for name in filter(None, preload.split(",")):
        importlib.import_module({"pytest": "_pytest.python", "hypothesis": "hypothesis.strategies"}.get(name, name))
    # The environment's packages (as the zygote imports them, `protocol.data_preload`), and
    # Hypothesis' strategies for them when Hypothesis is preloaded: each job's trusted child
    # starts with them instead of importing them.
    for name in filter(None, _option(argv, "--data", "").split(",")):
        if name in protocol.PRELOADABLE:
            importlib.import_module(name)
            if "hypothesis" in preload.split(","):
                importlib.import_module(f"hypothesis.extra.{name}")
    ChargedClock()  # reads the cgroup files once, so the first job does not pay for it
    # Opens the OOM file's descriptor (kept for the process's life) before the pristine snapshot
    # below counts this process's descriptors: a shared server's first job must not add one.
    oom_kills()
    # This process is PID 1: under gVisor every orphaned candidate process comes to it. Reap
    # each as it ends, so that no zombie of one test or case is there for the next (reaper.py).
    reaper = Reaper()
    reaper.start()
    if not _reset(ctl, reaper):
        os._exit(3)
    # What a shared server checks itself against between jobs; a server of one job (a fresh
    # container's) ends after it, so it takes no snapshot.
    pristine = Pristine() if max_jobs > 1 else None
    _write(result_fd, protocol.READY + b"\n")
    stdin = sys.stdin.buffer
    for served in range(1, max_jobs + 1):
        job = protocol.read_job(stdin)
        if job is None:
            break
        header, candidate, files = job
        progress = Progress(_progress_sender(result_fd, header.nonce) if header.config.progress else None)
        result, recycle = _serve_one(header, candidate, files, ctl, reaper, progress)
        last = recycle or served >= max_jobs
        _write(result_fd, protocol.format_result_line(header.nonce, last, result, header.config.output_bytes))
        if last:
            break
        # The result goes first: this job's verdict does not depend on the reset, and the host
        # turns it into evidence while the candidate side is reset here. The host sends the next
        # job at once but starts its clock only at READY; a sandbox that could not be reset takes
        # no other job: it ends, and a job sent to it meanwhile runs on another one.
        # A shared server checks itself while the zygote resets (settle waits for the job's
        # output readers, which end as the reset ends its candidate processes).
        checked = pristine if header.config.trusted_process == "shared" else None
        if not _reset(ctl, reaper, checked.settle if checked is not None else None):
            os._exit(3)
        if checked is not None and checked.changed:
            changed = ", ".join(checked.changed)
            print(f"verifier-runner: a job changed {changed} in the trusted server", file=sys.stderr)
            os._exit(0)
        _write(result_fd, protocol.READY + b"\n")
    os._exit(0)


def _progress_sender(fd: int, nonce: str) -> Callable[[int, int], None]:
    """Progress lines on the result channel (a forked trusted child inherits the descriptor)."""

    def send(done: int, total: int) -> None:
        _write(fd, protocol.format_progress_line(nonce, done, total))

    return send


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
