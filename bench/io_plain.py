"""A plain, unsandboxed judge for stdin/stdout programs: the baseline of `bench/io_speed.py`.

What a simple competitive-programming harness does: a new `python3` per case (subprocess),
stdin fed, stdout and stderr drained with the same caps, the same per-case time limit (CPU
time, as the sandboxed runner charges it, so that a busy host does not turn an honest program
into a timeout; past OVERLOAD_FACTOR times the limit in wall-clock time the case ends as
`overloaded`, as there) and memory limit (resident memory and its peak, polled from /proc while it runs),
the same comparison (`verifier.runner.cases`, so both judges judge alike) and the same
rules as the sandboxed runner: after two cases out of time the rest are not run, and a sample's
status is its worst case's in the verdict's order (oom, timeout, output_limit, error, failed).
No isolation at all: run it on trusted programs only (the shipped set).

    python bench/io_plain.py examples/programs/samples.jsonl --problems examples/programs/problems.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier.bench import io as bio  # noqa: E402
from verifier.runner.cases import Case, checker_from_source, compare, load_cases, run_checker  # noqa: E402
from verifier.runner.protocol import OVERLOAD_FACTOR  # noqa: E402
from verifier.runner.proxy import MAX_TIMEOUTS  # noqa: E402

POLL_S = 0.005
#: The verdict's order: the first status present among a sample's cases decides.
ORDER = ("oom", "timeout", "output_limit", "error", "failed", "overloaded")
OUTCOME_STATUS = {
    "passed": "passed",
    "wrong_answer": "failed",
    "runtime_error": "error",
    "timeout": "timeout",
    "oom": "oom",
    "output_limit": "output_limit",
    "overloaded": "overloaded",
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class PlainResult:
    status: str
    outcomes: list[str]
    seconds: float


def _memory(pid: int) -> tuple[int, int]:
    """(resident now, peak resident) of `pid` from /proc; (0, 0) once it has ended. The kernel's
    ru_maxrss is no use here: a child forked from this (large) process starts with its size."""
    rss = peak = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return rss, peak


def _cpu_s(pid: int) -> float:
    """CPU time (user + system) `pid` has used so far, from /proc; 0 once it has ended."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
    except (OSError, ValueError, IndexError):
        return 0.0


def run_case(path: str, case: Case, time_limit_s: float, memory_bytes: int, cap: int) -> tuple[str, bytes]:
    """(outcome, stdout) of one case in a new interpreter."""
    proc = subprocess.Popen(
        [sys.executable, "-I", path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=os.path.dirname(path),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    pidfd = os.pidfd_open(proc.pid)
    out_fd = proc.stdout.fileno()
    fds = {out_fd: bytearray(), proc.stderr.fileno(): bytearray()}
    totals = dict.fromkeys(fds, 0)
    stdin = proc.stdin.fileno()
    os.set_blocking(stdin, False)
    pending = memoryview(case.input)
    ended = None
    peak = 0
    start = time.monotonic()
    if not pending:
        proc.stdin.close()
    try:
        while ended is None:
            readable, writable, _ = select.select([*fds, pidfd], [stdin] if pending else [], [], POLL_S)
            if writable:
                try:
                    pending = pending[os.write(stdin, pending[:65536]) :]
                except BlockingIOError:
                    pass
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    proc.stdin.close()
            for fd in readable:
                if fd in fds:
                    chunk = os.read(fd, 65536)
                    totals[fd] += len(chunk)
                    fds[fd] += chunk[: max(0, cap - len(fds[fd]))]
                    if totals[fd] > cap:
                        ended = "output_limit"
            if pidfd in readable:
                break
            rss, now_peak = _memory(proc.pid)
            peak = max(peak, now_peak)
            if _cpu_s(proc.pid) >= time_limit_s:
                ended = "timeout"
            elif time.monotonic() - start >= time_limit_s * OVERLOAD_FACTOR:
                ended = "overloaded"
            elif rss > memory_bytes:
                ended = "oom"
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the program and anything it left behind
        except ProcessLookupError:
            pass
        _, status, usage = os.wait4(proc.pid, 0)
        cpu_s = usage.ru_utime + usage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
        for fd in list(fds):  # everything the program wrote before it ended
            os.set_blocking(fd, True)
            while chunk := os.read(fd, 65536):
                totals[fd] += len(chunk)
                fds[fd] += chunk[: max(0, cap - len(fds[fd]))]
        if ended is None and max(totals.values()) > cap:
            ended = "output_limit"
    finally:
        os.close(pidfd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if not stream.closed:
                stream.close()
    out = bytes(fds[out_fd])
    if ended == "output_limit":
        return "output_limit", b""
    if ended == "timeout" or cpu_s > time_limit_s:
        return "timeout", b""
    if ended == "overloaded":
        return "overloaded", b""
    if ended == "oom" or peak > memory_bytes:
        return "oom", b""
    if proc.returncode != 0:
        return "runtime_error", b""
    return "ran", out


def judge_sample(program: str, problem: bio.Problem, cap: int) -> PlainResult:
    spec = problem.spec
    suite_files = problem.suite.files
    program_settings = problem.suite.program
    assert program_settings is not None
    cases = load_cases(suite_files, program_settings.cases)
    checker = (
        checker_from_source(suite_files[program_settings.checker], program_settings.checker)
        if program_settings.checker is not None
        else None
    )
    started = time.monotonic()
    outcomes: list[str] = []
    timeouts = 0
    with tempfile.TemporaryDirectory(prefix="io-plain-") as tmp:
        path = os.path.join(tmp, "solution.py")
        with open(path, "w") as fh:
            fh.write(program)
        for case in cases:
            if timeouts >= MAX_TIMEOUTS:
                outcomes.append("timeout")  # not run, as in the sandboxed runner
                continue
            outcome, out = run_case(path, case, spec.time_limit_s, spec.memory_bytes, cap)
            if outcome == "ran":
                verdict = (
                    run_checker(checker, case, out)
                    if checker is not None
                    else compare(spec.mode, case.output, out, abs_tol=spec.abs_tol, rel_tol=spec.rel_tol)
                )
                outcome = "passed" if verdict.ok else "wrong_answer"
            timeouts += outcome == "timeout"
            outcomes.append(outcome)
    statuses = {OUTCOME_STATUS[o] for o in outcomes}
    status = next((s for s in ORDER if s in statuses), "passed")
    return PlainResult(status, outcomes, time.monotonic() - started)


def judge_all(
    samples: list[bio.Sample], problems: dict[str, bio.Problem], workers: int
) -> tuple[list[PlainResult], float]:
    """Every sample (identical (problem, program) pairs once, as the sandboxed bench does); wall time."""
    cap = bio.bench_limits(problems[s.problem_id] for s in samples).output_bytes
    keys = [(s.problem_id, s.program) for s in samples]
    distinct = list(dict.fromkeys(keys))
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda key: judge_sample(key[1], problems[key[0]], cap), distinct))
    wall = time.monotonic() - started
    by_key = dict(zip(distinct, results, strict=True))
    return [by_key[k] for k in keys], wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("samples", type=Path)
    ap.add_argument("--problems", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    problems = bio.load_problems(args.problems)
    samples = bio.read_samples(args.samples, problems)
    results, wall = judge_all(samples, problems, args.workers)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    print(json.dumps({"samples": len(samples), "wall_s": round(wall, 2), "statuses": counts}, indent=2))


if __name__ == "__main__":
    main()
