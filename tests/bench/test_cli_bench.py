"""`verifier bench humaneval`'s own logic, on a fake sandbox (the real one: test_humaneval.py).

The fake stands in for the engine only: the command, the batch, the Verifier and the
evidence decisions are the real ones."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from verifier import batch
from verifier.bench import humaneval as he
from verifier.cli import app
from verifier.errors import HostOverloaded
from verifier.limits import Limits
from verifier.runner.protocol import FailureRecord, JobCounts, JobResult, format_result_line, read_job
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, answer, raw_run
from verifier.sandbox.runtime import KERNEL_OF
from verifier.verify import Verifier

PROBLEMS = he.load_problems()


def passing(job: SandboxJob) -> RawRun:
    return answer(job)


def broken(job: SandboxJob) -> RawRun:
    return raw_run(b"", exit_code=1, stderr=b"the engine went away")  # no result line: infra_error


class _Engine:
    """The engine connection the command opens and closes (the image comes from the stand-in
    `build`): closing it is all it may be asked to do."""

    def close(self) -> None:
        pass


@pytest.fixture
def fake_sandbox(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[SandboxJob], RawRun]], list[Limits]]:
    """Route the command's sandbox to a FakeBackend; returns the limits it was built with."""
    seen: list[Limits] = []

    def install(handler: Callable[[SandboxJob], RawRun]) -> list[Limits]:
        def pooled(
            cls: type[Verifier], pool: Any = None, *, limits: Limits, image: Any = None, admission: Any = None
        ) -> Verifier:
            seen.append(limits)  # the command's warm pool
            return Verifier(backend=FakeBackend(handler), image="x", limits=limits)

        monkeypatch.setattr(Verifier, "pooled", classmethod(pooled))
        monkeypatch.setattr("verifier.sandbox.image.build", lambda *a, **k: ("x", False))
        monkeypatch.setattr("verifier.sandbox.docker_engine.connect", _Engine)
        return seen

    return install


def samples(tmp_path: Path, per_task: dict[str, int]) -> Path:
    path = tmp_path / "samples.jsonl"
    lines = [
        {"task_id": task, "completion": PROBLEMS[task].line["canonical_solution"]}
        for task, n in per_task.items()
        for _ in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def bench(*args: str) -> Any:
    return CliRunner().invoke(app, ["bench", "humaneval", *args, "--workers", "1"])


def summary(output: str) -> dict[str, Any]:
    return dict(json.loads(output[output.index("{") :]))


def test_default_k_and_the_reference_rule(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 10, "HumanEval/1": 3})))
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["pass@1"] == 1.0
    assert "pass@10" not in out and "pass@100" not in out  # HumanEval/1 has only 3 samples
    assert set(out["pass@k_not_reported"]) == {"pass@10", "pass@100"}


def test_k_option(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 3})), "--k", "2,3")
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["pass@2"] == 1.0 and out["pass@3"] == 1.0 and "pass@1" not in out
    bad = bench(str(samples(tmp_path, {"HumanEval/0": 1})), "--k", "0,x")
    assert bad.exit_code == 2 and "--k must be positive integers" in bad.stderr


def test_an_incomplete_sample_set_is_flagged(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1, "HumanEval/5": 1})))
    assert done.exit_code == 0
    assert "the samples attempt 2 of the 164 problems" in done.stderr
    out = summary(done.stdout)
    assert (out["problems_attempted"], out["problems_in_file"]) == (2, 164)


def test_default_timeout_is_the_references_3_seconds(tmp_path: Path, fake_sandbox: Any) -> None:
    limits = fake_sandbox(passing)
    assert bench(str(samples(tmp_path, {"HumanEval/0": 1}))).exit_code == 0
    assert limits[0].call_timeout_s == 3.0
    help_text = CliRunner().invoke(app, ["bench", "humaneval", "--help"], terminal_width=200).stdout
    flat = " ".join(help_text.replace("│", " ").split())  # rich wraps the help in a box of its own width
    assert "default: 3.0" in flat and "reference's timeout" in flat


def test_infra_errors_exit_2_not_1(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(broken)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 2})))
    assert done.exit_code == 2
    assert "2 sample(s) could not be verified" in done.stderr
    rows = [json.loads(x) for x in Path(f"{tmp_path}/samples.jsonl_results.jsonl").read_text().splitlines()]
    assert {r["status"] for r in rows} == {"infra_error"}


def header(job: SandboxJob) -> dict[str, Any]:
    return dict(json.loads(job.stdin.split(b"\n", 1)[0]))


def counting(jobs: list[SandboxJob]) -> Callable[[SandboxJob], RawRun]:
    def handler(job: SandboxJob) -> RawRun:
        jobs.append(job)
        return answer(job)

    return handler


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "0"], "--k must be positive integers"),
        (["--problems", "PROBLEMS"], "problems.jsonl:2: not JSON"),
        (["--min-limit", "1"], "--min-limit needs --limit-from-canonical FACTOR"),
        (["--limit-from-canonical", "0"], "--limit-from-canonical must be more than 0"),
        (["--workers", "2", "--n_workers", "2"], "--n_workers is --workers under the reference's name"),
        (["--timeout", "0"], "--timeout must be more than 0 seconds"),
        (["--report", "PROBLEMS"], "exists and is not a folder"),
        (["--ray", "auto", "--policy", "cold"], "--ray runs warm pools on the nodes"),
        (["--plus", "--plus-inputs", "0"], "--plus-inputs must be 1 to 10000, not 0"),
    ],
)
def test_every_input_is_checked_before_a_sandbox_starts(
    tmp_path: Path, fake_sandbox: Any, args: list[str], message: str
) -> None:
    pools = fake_sandbox(passing)
    bad_problems = tmp_path / "problems.jsonl"
    bad_problems.write_text(json.dumps(PROBLEMS["HumanEval/0"].line) + "\n{not json\n")
    args = [str(bad_problems) if a == "PROBLEMS" else a for a in args]
    done = CliRunner().invoke(app, ["bench", "humaneval", str(samples(tmp_path, {"HumanEval/0": 1})), *args])
    assert done.exit_code == 2, done.output
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert pools == []  # no sandbox was started


def test_a_malformed_sample_line_is_named_before_a_sandbox_starts(tmp_path: Path, fake_sandbox: Any) -> None:
    pools = fake_sandbox(passing)
    path = samples(tmp_path, {"HumanEval/0": 2})
    path.write_text(path.read_text() + '{"task_id": "HumanEval/0"}\n')
    done = bench(str(path))
    assert done.exit_code == 2 and "samples.jsonl:3: a sample needs task_id and completion" in done.stderr
    assert pools == []


def test_a_rerun_verifies_only_what_the_store_lacks(tmp_path: Path, fake_sandbox: Any) -> None:
    jobs: list[SandboxJob] = []
    fake_sandbox(counting(jobs))
    path = samples(tmp_path, {"HumanEval/0": 1, "HumanEval/1": 1, "HumanEval/2": 1})
    first = bench(str(path))
    assert first.exit_code == 0 and len(jobs) == 3
    out = summary(first.stdout)
    assert (out["verified"], out["from_store"]) == (3, 0)
    store = Path(f"{path}_evidence.jsonl")
    lines = store.read_text().splitlines()
    store.write_text("\n".join(lines[:2]) + "\n" + lines[2][:50])  # the last one torn, as by a crash
    again = bench(str(path))
    assert again.exit_code == 0 and len(jobs) == 4  # only the torn one ran again
    assert (summary(again.stdout)["verified"], summary(again.stdout)["from_store"]) == (1, 2)
    forced = bench(str(path), "--no-cache")
    assert forced.exit_code == 0 and len(jobs) == 7 and summary(forced.stdout)["from_store"] == 0
    assert len(store.read_text().splitlines()) == 3  # --no-cache starts the store anew


def test_details_name_the_failing_tests(tmp_path: Path, fake_sandbox: Any) -> None:
    def failing(job: SandboxJob) -> RawRun:
        record = FailureRecord(
            test_id="test_humaneval.py::test_check",
            kind="assertion",
            summary="an assertion failed",
            detail_untrusted="Traceback (most recent call last):\nE   AssertionError: ",
        )
        return answer(job, counts=JobCounts(expected=1, failed=1), failures=[record])

    fake_sandbox(failing)
    path = samples(tmp_path, {"HumanEval/0": 1})
    assert bench(str(path), "--details").exit_code == 0
    (row,) = [json.loads(x) for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert list(row)[-5:] == ["result", "passed", "evidence_id", "status", "failures"]
    assert row["result"] == "failed: " and row["status"] == "failed"
    (failure,) = row["failures"]
    assert failure["test"] == "test_humaneval.py::test_check" and failure["kind"] == "assertion"
    assert failure["message"] == "an assertion failed" and "AssertionError" in failure["detail_untrusted"]


def test_limits_from_the_canonical_solutions(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EvalPlus's rule: max(min, factor x canonical), the canonical measured once (then cached)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    jobs: list[SandboxJob] = []

    def timed(job: SandboxJob) -> RawRun:
        jobs.append(job)
        job_read = read_job(io.BytesIO(job.stdin))
        assert job_read is not None
        slow = b"def find_zero" in job_read[1]["solution.py"]  # HumanEval/32 "takes" 0.5 s, the others 0.01 s
        result = JobResult(
            runner="direct",
            exit_code=0,
            counts=JobCounts(expected=1, passed=1),
            tests_s=0.6 if slow else 0.02,
            host_wait_s=0.1 if slow else 0.01,  # credited: not the canonical's time
            kernel=KERNEL_OF[job.limits.runtime],
        )
        return raw_run(format_result_line(header(job)["nonce"], False, result))

    fake_sandbox(timed)
    path = samples(tmp_path, {"HumanEval/0": 2, "HumanEval/32": 1})
    done = bench(str(path), "--limit-from-canonical", "4", "--min-limit", "1")
    assert done.exit_code == 0, done.output
    measured = [header(j)["config"]["call_timeout_s"] for j in jobs[:2]]
    assert measured == [60.0, 60.0]  # the two canonical solutions, under the measuring limit
    limits = sorted(header(j)["config"]["call_timeout_s"] for j in jobs[2:])
    assert limits == [1.0, 2.0]  # HumanEval/0: the 1 s minimum; /32: 4 x 0.5 s
    calibration = summary(done.stdout)["limits_from_canonical"]
    assert (calibration["measured"], calibration["from_cache"], calibration["limit_s"]["max"]) == (2, 0, 2.0)
    again = bench(str(path), "--limit-from-canonical", "4", "--min-limit", "1", "--no-cache")
    assert again.exit_code == 0 and summary(again.stdout)["limits_from_canonical"]["measured"] == 2
    cached = bench(str(path), "--limit-from-canonical", "4")  # EvalPlus's 4 s minimum: new limits, same cache
    assert summary(cached.stdout)["limits_from_canonical"]["measured"] == 0
    assert {header(j)["config"]["call_timeout_s"] for j in jobs[-2:]} == {4.0}


def test_the_report_option_makes_the_page_from_the_runs_files(tmp_path: Path, fake_sandbox: Any) -> None:
    def judged(job: SandboxJob) -> RawRun:
        _header, candidate, _suite = read_job(io.BytesIO(job.stdin))  # type: ignore[misc]
        if not any(b"WRONG" in text for text in candidate.values()):
            return answer(job)
        record = FailureRecord(test_id="test_check", kind="assertion", summary="an assertion failed")
        return answer(job, counts=JobCounts(expected=1, failed=1), failures=[record])

    fake_sandbox(judged)
    path = samples(tmp_path, {"HumanEval/0": 2, "HumanEval/1": 2})
    lines = path.read_text().splitlines()
    lines[1] = json.dumps({"task_id": "HumanEval/0", "completion": "    return WRONG\n"})
    path.write_text("\n".join(lines) + "\n")
    done = bench(str(path), "--k", "1,2", "--report", str(tmp_path / "report"))
    assert done.exit_code == 0, done.output
    assert f"report: {tmp_path / 'report' / 'index.html'}" in " ".join(done.stderr.split())
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    out = summary(done.stdout)
    assert data["samples"] == 4 and data["jobs"] == out["distinct"] == 3
    assert data["pass_at_k"] == {"pass@1": out["pass@1"], "pass@2": out["pass@2"]}
    assert data["statuses"]["failed"] == 1 and data["failure_kinds"] == {"assertion": 1}
    assert data["run"]["wall_s"] == out["wall_s"] and len(data["latency"]["values"]) == 3
    assert (tmp_path / "report" / "summary.png").is_file() and (tmp_path / "report" / "index.html").is_file()


def test_plus_verifies_each_sample_again_with_its_plus_suite(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--plus: the inputs are made on the host (the real generator, cached under
    XDG_CACHE_HOME), every sample runs twice (its base suite, then its plus suite with the
    inputs in it), and base and base+plus are reported side by side; a rerun serves both."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    jobs: list[SandboxJob] = []

    def plus_fails(job: SandboxJob) -> RawRun:
        jobs.append(job)
        files = read_job(io.BytesIO(job.stdin))
        assert files is not None
        if "plus_inputs.txt" not in files[2]:
            return answer(job)
        record = FailureRecord(test_id="test_plus.py::test_plus", kind="assertion", summary="an assertion failed")
        return answer(job, counts=JobCounts(expected=2, passed=1, failed=1), failures=[record])

    fake_sandbox(plus_fails)
    path = samples(tmp_path, {"HumanEval/53": 2})
    done = bench(str(path), "--plus", "--plus-inputs", "7", "--k", "1")
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["base_vs_plus"] == {"pass@1": {"base": 1.0, "base+plus": 0.0}}
    assert out["plus"]["inputs"]["total"] == 7 and out["plus"]["verified"] == 1
    assert "base+plus" in done.stderr and "(7 plus inputs)" in done.stderr
    plus_files = read_job(io.BytesIO(jobs[-1].stdin))
    assert plus_files is not None
    shipped = plus_files[2]["plus_inputs.txt"].decode().splitlines()
    assert len(shipped) == 7 and {"humaneval_check.py", "test_plus.py"} <= set(plus_files[2])
    rows = [json.loads(x) for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert [(r["passed"], r["plus_passed"], r["plus_status"]) for r in rows] == [(True, False, "failed")] * 2
    again = bench(str(path), "--plus", "--plus-inputs", "7", "--k", "1")
    assert again.exit_code == 0 and len(jobs) == 2  # both verdicts from the store, the inputs from the cache
    assert "making plus inputs" not in again.stderr


def test_a_plus_pass_counts_only_beside_a_base_pass(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """base + plus passes when both do: a plus suite's own evidence is never the base verdict (a
    sample whose base job failed and whose plus job passed, as a flaky candidate or a base suite
    with tests beyond its check can make it, passes base + plus nowhere)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def base_fails(job: SandboxJob) -> RawRun:
        files = read_job(io.BytesIO(job.stdin))
        assert files is not None
        if "plus_inputs.txt" in files[2]:
            return answer(job)
        record = FailureRecord(test_id="test_humaneval.py::test_check", kind="assertion", summary="an assertion failed")
        return answer(job, counts=JobCounts(expected=1, passed=0, failed=1), failures=[record])

    fake_sandbox(base_fails)
    path = samples(tmp_path, {"HumanEval/53": 2})
    done = bench(str(path), "--plus", "--plus-inputs", "3", "--k", "1")
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["base_vs_plus"] == {"pass@1": {"base": 0.0, "base+plus": 0.0}}
    assert out["plus"]["passed"] == 0
    rows = [json.loads(x) for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert [(r["passed"], r["plus_passed"], r["plus_status"]) for r in rows] == [(False, False, "passed")] * 2


@pytest.mark.raw_overload
def test_a_sample_whose_base_run_stayed_overloaded_is_out_of_base_plus_too(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base verdict the host was too busy to give is no failure of the model's, in base + plus
    either: the sample is left out of both pass@k, not counted as failing plus."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)

    def first_base_busy(job: SandboxJob) -> RawRun:
        files = read_job(io.BytesIO(job.stdin))
        assert files is not None
        first = not any(b"# 2" in data for data in files[1].values())
        if "plus_inputs.txt" not in files[2] and first:  # the first sample's base job, every try
            return busy(job)
        return answer(job)

    fake_sandbox(first_base_busy)
    path = tmp_path / "two.jsonl"
    line = {"task_id": "HumanEval/53", "completion": PROBLEMS["HumanEval/53"].line["canonical_solution"]}
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "completion": line["completion"] + "# 2\n"}) + "\n")
    done = bench(str(path), "--plus", "--plus-inputs", "3", "--k", "1")
    assert done.exit_code == 3, done.stderr  # one sample stayed overloaded
    out = summary(done.stdout)
    assert out["base_vs_plus"] == {"pass@1": {"base": 1.0, "base+plus": 1.0}}  # the other sample alone


def test_plus_jobs_run_in_turn_with_the_base_tests(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--plus runs one batch, a sample's plus job after its base job and before the next
    sample's: a plus job's time limit is never a pass of its own, waited for alone."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    order: list[bool] = []

    def record(job: SandboxJob) -> RawRun:
        files = read_job(io.BytesIO(job.stdin))
        assert files is not None
        order.append("plus_inputs.txt" in files[2])
        return answer(job)

    fake_sandbox(record)
    # HumanEval/39 gets no plus inputs: its plus suite is its base suite, one job for both.
    path = samples(tmp_path, {"HumanEval/53": 1, "HumanEval/39": 1, "HumanEval/0": 1})
    done = bench(str(path), "--plus", "--plus-inputs", "3", "--k", "1", "--workers", "1")
    assert done.exit_code == 0, done.output
    assert order == [False, True, False, False, True]
    out = summary(done.stdout)
    assert out["verified"] == 3 and out["plus"]["verified"] == 3  # /39's one job ran now, for both
    rows = [json.loads(x) for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert [(r["passed"], r["plus_passed"]) for r in rows] == [(True, True)] * 3


def busy(job: SandboxJob) -> RawRun:
    raise HostOverloaded("no sandbox slot came free within 0 s (stand-in)")


@pytest.mark.raw_overload
def test_samples_that_stay_overloaded_exit_3_and_stay_out_of_pass_at_k(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 §4: an overloaded sample is retried after pauses; one that stays overloaded is
    counted apart, never as the model's failure, and the command says so with exit 3."""
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)
    calls: list[SandboxJob] = []

    def always_busy(job: SandboxJob) -> RawRun:
        calls.append(job)
        return busy(job)

    fake_sandbox(always_busy)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1})))
    assert done.exit_code == 3, done.stderr
    assert "1 sample(s) stayed overloaded" in done.stderr
    out = summary(done.stdout)
    assert (out["overloaded"], out["infra_errors"], out["passed"]) == (1, 0, 0)
    # Not a failure of the model's: no sample is left to judge, so pass@1 is not reported (not 0).
    assert "pass@1" not in out and out["pass@k_not_reported"]["pass@1"] == "no samples"
    assert len(calls) == 1 + batch.OVERLOADED_RETRIES


@pytest.mark.raw_overload
def test_an_overloaded_sample_that_gets_a_slot_on_a_retry_is_judged(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)
    tries: list[int] = []

    def busy_twice(job: SandboxJob) -> RawRun:
        tries.append(1)
        return busy(job) if len(tries) <= 2 else answer(job)

    fake_sandbox(busy_twice)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1})))
    assert done.exit_code == 0, done.stderr
    out = summary(done.stdout)
    assert (out["overloaded"], out["passed"], out["rerun"]) == (0, 1, 1)
    rows = [json.loads(x) for x in Path(f"{tmp_path}/samples.jsonl_results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["passed"]


def test_ctrl_c_says_what_was_kept_and_that_a_rerun_resumes(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_sandbox(passing)
    path = samples(tmp_path, {"HumanEval/0": 1, "HumanEval/1": 1})
    assert bench(str(path)).exit_code == 0
    real = he.evaluate

    def interrupted(work: Any, options: Any, *, store: Any, **kw: Any) -> Any:
        (tmp_path / "more").mkdir(exist_ok=True)
        more = samples(tmp_path / "more", {"HumanEval/2": 1})
        real(he.load(more, None), options, store=store, **kw)  # one more verdict, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(he, "evaluate", interrupted)
    done = bench(str(path))
    assert done.exit_code == 130
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert f"interrupted: 3 verdicts are saved in {path}_evidence.jsonl (1 from this run)" in line
    assert "run the same command again to verify only the rest" in line and "Traceback" not in done.output


# -- EvalPlus's options and its eval_results.json ---------------------------------------------
DATA = Path(__file__).parent / "data"
EVALPLUS_PROBLEMS = DATA / "evalplus_problems.jsonl"


def _shape(value: Any) -> Any:
    """A JSON value's structure: dict keys in order with their values' shapes, a list's first item's."""
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def evalplus_samples(tmp_path: Path) -> Path:
    path = tmp_path / "samples.jsonl"
    rows = [
        {"task_id": "HumanEval/53", "solution": "def add(x, y):\n    return x + y\n"},
        {"task_id": "HumanEval/53", "solution": "def add(x, y):\n    return x + y  # PLUSFAIL\n"},
        {"task_id": "HumanEval/2", "solution": "def truncate_number(n):\n    return n % 1.0  # BASEHANG\n"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def evalplus_judge(job: SandboxJob) -> RawRun:
    """base/plus failures by the candidate's marker: a failing plus input 0 and 1, a base timeout on input 2."""
    _header, candidate, _suite = read_job(io.BytesIO(job.stdin))  # type: ignore[misc]
    text = b"".join(candidate.values())
    test = "test_evalplus.py::test_{}"
    if b"PLUSFAIL" in text:
        failures = [
            FailureRecord(test_id=test.format(f"plus_{i}"), kind="assertion", summary="an assertion failed")
            for i in (0, 1)
        ]
        return answer(job, counts=JobCounts(expected=5, passed=3, failed=2), failures=failures)
    if b"BASEHANG" in text:
        record = FailureRecord(test_id=test.format("base_2"), kind="timeout", summary="the call took too long")
        return answer(job, counts=JobCounts(expected=5, passed=4, failed=1), failures=[record])
    return answer(job, counts=JobCounts(expected=5, passed=5))


def test_eval_results_json_has_evalplus_layout(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(evalplus_judge)
    path = evalplus_samples(tmp_path)
    done = bench(str(path), "--problems", str(EVALPLUS_PROBLEMS), "--dataset", "humaneval", "--k", "1")
    assert done.exit_code == 0, done.output
    written = tmp_path / "samples.eval_results.json"
    assert summary(done.stdout)["eval_results"] == str(written)
    got = json.loads(written.read_text())
    fixture = json.loads((DATA / "evalplus_eval_results.json").read_text())
    del fixture["_comment"]
    assert _shape(got)[:2] == _shape(fixture)[:2] and list(got) == list(fixture)
    for rows in got["eval"].values():
        for row in rows:
            assert _shape(row) == _shape(fixture["eval"]["HumanEval/0"][0]) or row["plus_fail_tests"] == []
            assert list(row) == list(fixture["eval"]["HumanEval/0"][0])
    assert list(got["eval"]) == ["HumanEval/53", "HumanEval/2"]
    ok, plus_fails = got["eval"]["HumanEval/53"]
    assert (ok["base_status"], ok["plus_status"], ok["base_fail_tests"], ok["plus_fail_tests"]) == (
        "pass",
        "pass",
        [],
        [],
    )
    assert ok["solution"] == "def add(x, y):\n    return x + y\n"
    # Without --test-details, the first failing input only (EvalPlus: the one its fast check stopped at).
    assert (plus_fails["base_status"], plus_fails["plus_status"], plus_fails["plus_fail_tests"]) == (
        "pass",
        "fail",
        [[-3, 3]],
    )
    (hang,) = got["eval"]["HumanEval/2"]
    assert (hang["base_status"], hang["plus_status"]) == ("timeout", "pass")
    problems = [json.loads(line) for line in EVALPLUS_PROBLEMS.read_text().splitlines()]
    assert hang["base_fail_tests"] == [problems[1]["base_input"][2]]
    assert got["pass_at_k"] == {"base": {"pass@1": 0.5}, "plus": {"pass@1": 0.25}}
    assert got["hash"] == hashlib.md5(EVALPLUS_PROBLEMS.read_bytes()).hexdigest()


def test_eval_results_json_keeps_the_datasets_plus_inputs_under_plus(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--plus on EvalPlus problems (which carry their plus inputs: their plus suite is their own):
    a sample failing one of the dataset's plus inputs fails plus in eval_results.json too, as in
    the summary and the results file (it was read from the suite's base tests alone: a pass)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fake_sandbox(evalplus_judge)
    path = evalplus_samples(tmp_path)
    done = bench(str(path), "--problems", str(EVALPLUS_PROBLEMS), "--dataset", "humaneval", "--k", "1", "--plus")
    assert done.exit_code == 0, done.output
    got = json.loads((tmp_path / "samples.eval_results.json").read_text())
    _ok, plus_fails = got["eval"]["HumanEval/53"]
    assert (plus_fails["base_status"], plus_fails["plus_status"], plus_fails["plus_fail_tests"]) == (
        "pass",
        "fail",
        [[-3, 3]],
    )
    rows = [json.loads(line) for line in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert [r["plus_passed"] for r in rows[:2]] == [True, False]
    assert got["pass_at_k"]["plus"] == {"pass@1": summary(done.stdout)["base_vs_plus"]["pass@1"]["base+plus"]}


@pytest.mark.raw_overload
@pytest.mark.parametrize("which", ["base", "plus"])
def test_a_run_that_stayed_overloaded_is_out_of_every_pass_at_k(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """The second sample's base or plus run stays overloaded: the summary, eval_results.json and
    the report leave it out of base + plus's pass@k alike (and out of base's when its base run
    did), never a failure of the model's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)

    def second_busy(job: SandboxJob) -> RawRun:
        files = read_job(io.BytesIO(job.stdin))
        assert files is not None
        second = any(b"# 2" in data for data in files[1].values())
        if second and ("plus_inputs.txt" in files[2]) == (which == "plus"):
            return busy(job)
        return answer(job)

    fake_sandbox(second_busy)
    path = tmp_path / "two.jsonl"
    line = {"task_id": "HumanEval/53", "completion": PROBLEMS["HumanEval/53"].line["canonical_solution"]}
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "completion": line["completion"] + "# 2\n"}) + "\n")
    done = bench(str(path), "--plus", "--plus-inputs", "3", "--k", "1", "--report", str(tmp_path / "report"))
    assert done.exit_code == 3, done.stderr
    assert summary(done.stdout)["base_vs_plus"] == {"pass@1": {"base": 1.0, "base+plus": 1.0}}
    got = json.loads((tmp_path / "two.eval_results.json").read_text())
    assert got["pass_at_k"] == {"base": {"pass@1": 1.0}, "plus": {"pass@1": 1.0}}
    from verifier.bench.report_data import collect

    data = collect(Path(f"{path}_results.jsonl"), ks=(1,))
    assert data.pass_at_k == {"pass@1": 1.0} and data.plus_pass_at_k == {"pass@1": 1.0}
    assert data.problems[0].plus_pass_at_k == {"pass@1": 1.0}


def test_evalplus_option_names(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(evalplus_judge)
    path = evalplus_samples(tmp_path)
    common = [str(path), "--problems", str(EVALPLUS_PROBLEMS), "--k", "1"]
    done = CliRunner().invoke(
        app, ["bench", "humaneval", *common, "--test-details", "--i-just-wanna-run", "--parallel", "1"]
    )
    assert done.exit_code == 0, done.output
    got = json.loads((tmp_path / "samples.eval_results.json").read_text())
    assert got["eval"]["HumanEval/53"][1]["plus_fail_tests"] == [[-3, 3], [100000000000000000000, 1]]  # every one
    rows = [json.loads(line) for line in Path(f"{path}_results.jsonl").read_text().splitlines()]
    assert "failures" in rows[1]  # --test-details implies --details
    base_only = bench(*common, "--base-only")
    assert base_only.exit_code == 0, base_only.output
    got = json.loads((tmp_path / "samples.eval_results.json").read_text())
    assert {r["plus_status"] for rows in got["eval"].values() for r in rows} == {None}
    assert list(got["pass_at_k"]) == ["base"]
    mbpp = bench(*common, "--dataset", "mbpp")
    assert mbpp.exit_code == 2 and "--dataset mbpp: the problems include 3 tasks of another dataset" in mbpp.stderr
    assert "give the MBPP+ problems file" in bench(str(path), "--dataset", "mbpp").stderr
    both = bench(*common, "--parallel", "2")  # bench() gives --workers too
    assert both.exit_code == 2 and "--parallel is --workers under EvalPlus's name" in both.stderr
    mixed = bench(*common, "--gt-time-limit-factor", "2", "--limit-from-canonical", "3")
    assert mixed.exit_code == 2 and "give one pair" in mixed.stderr


@pytest.mark.raw_overload
def test_overloaded_retries_is_an_option_and_pass_at_k_counts_judged_samples_only(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 §4: `--overloaded-retries N` bounds the retries; a sample that stays overloaded
    is no failure of the model's in the summary's pass@k nor in the report's, and the report
    says how many samples were not judged."""
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)
    tries: list[bool] = []

    def busy_marked(job: SandboxJob) -> RawRun:
        _header, candidate, _suite = read_job(io.BytesIO(job.stdin))  # type: ignore[misc]
        marked = any(b"BUSY" in text for text in candidate.values())
        tries.append(marked)
        return busy(job) if marked else answer(job)

    fake_sandbox(busy_marked)
    path = samples(tmp_path, {"HumanEval/0": 2})
    lines = path.read_text().splitlines()
    lines[0] = json.dumps(
        {"task_id": "HumanEval/0", "completion": PROBLEMS["HumanEval/0"].line["canonical_solution"] + "    # BUSY\n"}
    )
    path.write_text("\n".join(lines) + "\n")
    done = bench(str(path), "--k", "1", "--overloaded-retries", "1", "--report", str(tmp_path / "report"))
    assert done.exit_code == 3, done.stderr
    assert tries.count(True) == 2 and tries.count(False) == 1  # one try and one retry, then counted apart
    out = summary(done.stdout)
    assert (out["overloaded"], out["passed"], out["statuses"]["overloaded"]) == (1, 1, 1)
    assert out["pass@1"] == 1.0  # over the judged sample; counting the overloaded one as failed would say 0.5
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (data["not_judged"], data["pass_at_k"]) == (1, {"pass@1": 1.0})
    assert data["problems"][0]["samples"] == 1
    page = (tmp_path / "report" / "index.html").read_text()
    assert "1 samples were not judged" in page
    again = bench(str(path), "--k", "1", "--overloaded-retries", "0")
    assert again.exit_code == 3 and tries.count(True) == 3  # served passes stay, the overloaded one runs once more


def test_overloaded_retries_must_be_0_to_10(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1})), "--overloaded-retries", "11")
    assert done.exit_code == 2 and "--overloaded-retries" in done.stderr


@pytest.mark.raw_overload
def test_a_loop_the_busy_host_left_unjudged_is_retried_and_judged_timeout(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: infinite loops ended `overloaded` on a shared machine (the runner's backstop: a
    call that got under a quarter of a CPU for four times its limit is not judged). The bench
    tries such a sample again; once the host gives it its CPU it is the candidate's `timeout`,
    a failure of the model's that pass@k counts."""
    monkeypatch.setattr("verifier.batch.BACKOFF_S", 0.0)
    tries: list[str] = []

    def starved_then_judged(job: SandboxJob) -> RawRun:
        kind = "overloaded" if not tries else "timeout"
        tries.append(kind)
        record = FailureRecord(test_id="test_check", kind=kind, summary=f"the call ended: {kind}")
        return answer(job, counts=JobCounts(expected=1, failed=1), failures=[record])

    fake_sandbox(starved_then_judged)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1})), "--k", "1")
    assert done.exit_code == 0, done.stderr
    assert tries == ["overloaded", "timeout"]
    out = summary(done.stdout)
    assert (out["statuses"]["timeout"], out["overloaded"], out["rerun"], out["pass@1"]) == (1, 0, 1, 0.0)
