"""Programs on stdin/stdout in the real sandbox: the shipped problem set gets the statuses it
names and agrees with the plain judge; `verifier check` on program suites; what a case's
evidence holds; each case starting clean; a reused sandbox serving tests after programs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE, SUITE
from verifier import Candidate, Limits, Status, Verifier
from verifier.bench import io as bio
from verifier.cli import app
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "examples" / "programs"
A_PLUS_B, TWO_SUM = PROGRAMS / "a_plus_b", PROGRAMS / "two_sum_any"


@pytest.fixture(scope="module")
def pool(sandbox_image: str) -> Iterator[Verifier]:
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, preload=""), image=sandbox_image, limits=Limits(timeout_s=60)
    ) as v:
        yield v


def suite_of(tmp_path: Path, cases: dict[str, tuple[str, str]], program: str = "time_limit_s = 2.0\n") -> Path:
    (tmp_path / "cases").mkdir(parents=True)
    (tmp_path / "suite.toml").write_text(f'kind = "program"\n[program]\n{program}')
    for name, (given, want) in cases.items():
        (tmp_path / "cases" / f"{name}.in").write_text(given)
        (tmp_path / "cases" / f"{name}.out").write_text(want)
    return tmp_path


@pytest.mark.slow
def test_the_shipped_set_gets_its_statuses_and_agrees_with_the_plain_judge(sandbox_image: str) -> None:
    from bench.io_plain import judge_all

    problems = bio.load_problems(PROGRAMS / "problems.jsonl")
    samples = bio.read_samples(PROGRAMS / "samples.jsonl", problems)
    run = bio.evaluate(samples, problems, ks=[1], workers=2, image=sandbox_image, progress=False)
    ours = [ev.status.value for ev in run.evidence]
    wrong = [
        (s.problem_id, s.line["note"], s.line["expect"], ev.status.value, ev.reason)
        for s, ev in zip(samples, run.evidence, strict=True)
        if ev.status.value != s.line["expect"]
    ]
    assert not wrong
    assert all(ev.ok == (s.line["expect"] == "passed") for s, ev in zip(samples, run.evidence, strict=True))
    plain, _ = judge_all(samples, problems, workers=2)
    # Both judges charge CPU time, so a busy host changes neither's verdict; a sample whose plain
    # run waited past the wall-clock backstop (the host, not the program) is no verdict to compare.
    compared = [(r.status, mine) for r, mine in zip(plain, ours, strict=True) if r.status != "overloaded"]
    assert [theirs for theirs, _ in compared] == [mine for _, mine in compared]


def test_check_a_program_from_the_command_line() -> None:
    runner = CliRunner()
    good = runner.invoke(app, ["check", str(A_PLUS_B / "good.py"), "--suite", str(A_PLUS_B / "suite"), "--json"])
    assert good.exit_code == 0, good.output
    ev = json.loads(good.stdout)
    assert ev["ok"] and ev["kind"] == "program" and len(ev["cases"]) == ev["counts"]["expected"] >= 10
    bad = runner.invoke(app, ["check", str(A_PLUS_B / "wrong.py"), "--suite", str(A_PLUS_B / "suite")])
    assert bad.exit_code == 1
    assert "wrong answer: the output ends before line 2 of the expected output" in " ".join(bad.stdout.split())
    judged = runner.invoke(app, ["check", str(TWO_SUM / "wrong.py"), "--suite", str(TWO_SUM / "suite"), "--json"])
    ev = json.loads(judged.stdout)
    assert judged.exit_code == 1 and ev["status"] == "failed"
    assert any("checker rejected" in f["message"] and "checker:" in f["detail_untrusted"] for f in ev["failures"])
    assert runner.invoke(app, ["check", str(TWO_SUM / "good.py"), "--suite", str(TWO_SUM / "suite")]).exit_code == 0


def test_what_a_case_records(pool: Verifier, tmp_path: Path) -> None:
    suite = suite_of(tmp_path, {"1": ("2 3\n", "5\n"), "2": ("4 4\n", "8\n"), "3": ("0 0\n", "0\n")})
    program = Candidate.from_text(
        "import sys\n"
        "a, b = map(int, input().split())\n"
        "print('working on it', file=sys.stderr)\n"  # stderr never counts
        "if a == 4:\n"
        "    print(a + b + 1)\n"
        "elif a == 0:\n"
        "    raise KeyError('no such thing')\n"
        "else:\n"
        "    print(a + b)\n"
    )
    ev = pool.check(program, suite)
    assert ev.status is Status.ERROR and ev.fault.value == "candidate"
    first, second, third = ev.cases
    assert first.status is Status.PASSED and first.exit_code == 0 and first.difference is None
    assert 5 * 2**20 < first.memory_bytes < 64 * 2**20 and 0 < first.time_s < 2 and first.cpu_s > 0
    assert second.status is Status.FAILED and second.difference is not None
    assert (second.difference.line, second.difference.expected, second.difference.got_untrusted) == (1, "8", "9")
    assert third.status is Status.ERROR and third.exit_code == 1 and third.message == "the program exited with code 1"
    detail = next(f.detail_untrusted for f in ev.failures if f.test_id == "case 3")
    assert detail.splitlines()[-1] == "E   KeyError: 'no such thing'" and "program_exec" not in detail
    assert "working on it" in ev.candidate_output_untrusted


def test_a_program_runs_as_python_would_run_it(pool: Verifier, tmp_path: Path) -> None:
    suite = suite_of(tmp_path, {"1": ("héllo\nwörld\n", "ok\n")}, 'compare = "exact"\n')
    program = Candidate.from_text(
        "import sys, os, threading, atexit\n"
        "assert __name__ == '__main__' and sys.argv == [__file__] and os.path.exists(__file__)\n"
        "assert sys.stdin.read() == 'héllo\\nwörld\\n' and sys.stdin.read() == ''\n"
        "assert os.getuid() == 2001 and not os.access('/run/trusted', os.R_OK)\n"
        "out = []\n"
        "threading.Thread(target=lambda: (__import__('time').sleep(0.05), out.append('ok'))).start()\n"
        "atexit.register(lambda: print(out[0]))\n"  # a non-daemon thread is waited for, then atexit runs
    )
    ev = pool.check(program, suite)
    assert ev.ok, [(f.message, f.detail_untrusted) for f in ev.failures]


def test_every_case_starts_clean(pool: Verifier, tmp_path: Path) -> None:
    cases = {str(i): ("", "fresh\n") for i in range(1, 6)}
    program = Candidate.from_text(
        "import os\n"
        "seen = os.path.exists('/tmp/mark') or os.path.exists('/dev/shm/mark')\n"
        "print('seen' if seen else 'fresh')\n"
        "open('/tmp/mark', 'w').close()\n"
        "open('/dev/shm/mark', 'w').close()\n"
    )
    ev = pool.check(program, suite_of(tmp_path, cases))
    assert ev.ok and len(ev.cases) == 5


def test_the_same_sandbox_serves_tests_after_programs(pool: Verifier, tmp_path: Path) -> None:
    suite = suite_of(tmp_path, {"1": ("1 2\n", "3\n")})
    assert pool.check(Candidate.from_text("print(sum(map(int, input().split())))\n"), suite).ok
    ev = pool.check(EXAMPLE / "good.py", SUITE)  # pytest, not pre-imported in this pool
    assert ev.ok and ev.kind == "tests" and ev.cases == []
    assert pool.check(Candidate.from_text("print(3)\n"), suite).ok


def test_time_and_memory_limits_are_per_case(pool: Verifier, tmp_path: Path) -> None:
    suite = suite_of(
        tmp_path,
        {"1": ("0.1\n", "ok\n"), "2": ("0.1\n", "ok\n"), "3": ("0.1\n", "ok\n")},
        "time_limit_s = 0.5\nmemory_bytes = 33554432\n",
    )
    sleeper = Candidate.from_text("import time\ntime.sleep(float(input()))\nprint('ok')\n")
    ev = pool.check(sleeper, suite)  # three cases of 0.1 s each pass under a 0.5 s per-case limit
    assert ev.ok, [c.message for c in ev.cases]
    hog = Candidate.from_text("x = bytearray(48 << 20)\nprint('ok')\n")
    ev = pool.check(hog, suite)
    assert ev.status is Status.OOM and all(
        c.message == "the program used more than its 32 MiB memory limit" for c in ev.cases
    )


@pytest.mark.slow
def test_a_thousand_wrong_cases_still_make_evidence(pool: Verifier, tmp_path: Path) -> None:
    """The most cases a suite may have, each a wrong answer with stderr and an output line of the
    bytes JSON expands most (NUL, invalid UTF-8): the result line stays within its bounds."""
    tmp_path.mkdir(exist_ok=True)
    rows = "".join(json.dumps({"input": f"{i}\n", "output": f"{i}\n"}) + "\n" for i in range(1000))
    (tmp_path / "cases.jsonl").write_text(rows)
    (tmp_path / "suite.toml").write_text(
        'kind = "program"\n[program]\ncases = "cases.jsonl"\n[limits]\ntimeout_s = 300\n'
    )
    program = Candidate.from_text(
        "import os\nos.write(2, b'\\x00' * 1500)\nos.write(1, b'\\xff\\x00' * 3000 + b'\\n')\n"
    )
    ev = pool.check(program, tmp_path)
    assert ev.status is Status.FAILED and ev.fault.value == "candidate", ev.reason
    assert len(ev.cases) == 1000 and all(c.status is Status.FAILED for c in ev.cases)
    with_text = [c for c in ev.cases if c.difference is not None]
    assert len(with_text) == 50 and with_text[0].difference is not None
    # A line of the text JSON expands most is cut to the case's byte budget, and the cut is said.
    got = with_text[0].difference.got_untrusted
    assert got is not None and 0 < len(got) <= 200 and "characters cut]" in got, got


def test_compare_none_gives_back_what_the_program_wrote(pool: Verifier, tmp_path: Path) -> None:
    """No output is compared: a case passes when the program exits 0, and its stdout and stderr
    come back in the evidence, byte for byte (what /run_code answers); past its share of the
    output limit a program is an output_limit, never cut short silently."""
    suite = suite_of(tmp_path / "s", {"1": ("21\n", ""), "2": ("x\n", "")}, 'compare = "none"\n')
    program = "import sys\nprint('é', file=sys.stderr)\nprint(int(input()) * 2)\n"
    ev = pool.check(Candidate.from_text(program), suite)
    first, second = ev.cases
    assert first.status is Status.PASSED and first.stdout_untrusted == "42\n" and first.stderr_untrusted == "é\n"
    assert second.status is Status.ERROR and second.exit_code == 1 and second.stdout_untrusted == ""
    assert second.stderr_untrusted is not None and "ValueError" in second.stderr_untrusted
    assert ev.status is Status.ERROR and not ev.ok
    loud = pool.check(Candidate.from_text("print('x' * 10_000_000)\n"), suite)
    assert [c.status for c in loud.cases] == [Status.OUTPUT_LIMIT] * 2
    compared = pool.check(Candidate.from_text(program), suite_of(tmp_path / "t", {"1": ("21\n", "42\n")}))
    assert compared.ok and compared.cases[0].stdout_untrusted is None  # compared inside, never sent back
