"""`verifier bench io`'s own logic: the problems/samples schema, a suite per problem, pass@k and
status counts, the command's exits. On a fake sandbox (the real one: test_programs_docker.py);
the command, the batch, the Verifier and the verdict are the real ones."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from verifier import Verifier
from verifier.bench import io as bio
from verifier.cli import app
from verifier.limits import Limits
from verifier.runner.cases import load_cases
from verifier.runner.protocol import CaseRecord, FailureRecord, JobCounts, JobResult, format_result_line, read_job
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, raw_run
from verifier.sandbox.runtime import KERNEL_OF

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "examples" / "programs"
A_PLUS_B = {"problem_id": "a+b", "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_problem_becomes_a_program_suite() -> None:
    problem = bio.IOProblem.model_validate({**A_PLUS_B, "compare": "exact", "time_limit_s": 0.5})
    suite = bio.problem_suite(problem)
    assert suite.kind == "program" and suite.name == "a+b"
    assert suite.program is not None and (suite.program.compare, suite.program.time_limit_s) == ("exact", 0.5)
    assert set(suite.files) == {"suite.toml", "cases.jsonl"}  # the settings are in the digest
    assert [c.output for c in load_cases(suite.files, "cases.jsonl")] == [b"3\n", b"4\n"]
    assert bio.problem_suite(problem).sha256 == suite.sha256  # stable
    other = bio.problem_suite(bio.IOProblem.model_validate({**A_PLUS_B, "time_limit_s": 0.6}))
    assert other.sha256 != suite.sha256


def test_a_checker_problem() -> None:
    checker = "def check(input, output, expected):\n    return output.split() == expected.split()\n"
    suite = bio.problem_suite(bio.IOProblem.model_validate({**A_PLUS_B, "checker": checker}))
    assert suite.program is not None and suite.program.compare == "checker"
    assert suite.files["checker.py"] == checker.encode()


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"time_limt_s": 1}, "time_limt_s: Extra inputs are not permitted"),
        ({"tests": []}, "tests"),
        ({"tests": [{"input": "1"}]}, "tests.0.output"),
        ({"compare": "checker"}, "compare 'checker' needs a checker"),
        ({"compare": "exact", "checker": "def check(a, b, c): return True"}, "a checker decides alone"),
        ({"checker": "def judge(): pass"}, "must define check"),
        ({"memory_bytes": 1}, "memory_bytes"),
    ],
)
def test_bad_problems_name_line_and_key(tmp_path: Path, change: dict[str, Any], error: str) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, {**A_PLUS_B, "problem_id": "x", **change}])
    with pytest.raises(ValueError, match=f"p.jsonl:2: .*{error}"):
        bio.load_problems(path)


def test_problem_ids_are_unique_and_samples_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="appears twice"):
        bio.load_problems(write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, A_PLUS_B]))
    problems = bio.load_problems(write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B]))
    with pytest.raises(ValueError, match="unknown problem_id 'nope'"):
        bio.read_samples(write_jsonl(tmp_path / "s.jsonl", [{"problem_id": "nope", "program": ""}]), problems)
    with pytest.raises(ValueError, match=r"s\.jsonl:1: a sample needs problem_id and program"):
        bio.read_samples(write_jsonl(tmp_path / "s.jsonl", [{"problem_id": "a+b", "completion": ""}]), problems)


def test_identical_samples_run_once_and_limits_fit_every_problem(tmp_path: Path) -> None:
    big = {"problem_id": "big", "tests": [{"input": "", "output": "x" * 800_000}] * 3, "time_limit_s": 30.0}
    problems = bio.load_problems(write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, {**big, "memory_bytes": 600 * 2**20}]))
    rows = [{"problem_id": "a+b", "program": "print(3)"}] * 3 + [{"problem_id": "big", "program": "print(3)"}]
    samples = bio.read_samples(write_jsonl(tmp_path / "s.jsonl", rows), problems)
    jobs, mapping = bio.unique_jobs(samples, problems)
    assert len(jobs) == 2 and mapping == [0, 0, 0, 1]
    limits = bio.bench_limits(problems.values())
    assert limits.timeout_s == 3 * 30.0 + bio.RUN_SLACK_S
    assert limits.memory_bytes == 728 * 2**20 and limits.output_bytes == 2 * 800_000 + 64 * 1024
    for p in problems.values():
        p.suite.limits(limits)  # every problem's memory fits


def test_a_sample_names_its_language(tmp_path: Path) -> None:
    """`language` (SandboxFusion's names, javascript an alias) picks the program's language; the same
    bytes in two languages are two jobs; an unknown language names its line."""
    from verifier.suite import Suite
    from verifier.verify import program_language

    problems = bio.load_problems(write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B]))
    rows = [
        {"problem_id": "a+b", "program": "print(3)"},
        {"problem_id": "a+b", "program": "print(3)", "language": "python"},
        {"problem_id": "a+b", "program": "console.log(3)", "language": "javascript"},
        {"problem_id": "a+b", "program": "print(3)", "language": "bash"},
    ]
    samples = bio.read_samples(write_jsonl(tmp_path / "s.jsonl", rows), problems)
    assert [s.language for s in samples] == ["python", "python", "nodejs", "bash"]
    jobs, mapping = bio.unique_jobs(samples, problems)
    assert len(jobs) == 3 and mapping == [0, 0, 1, 2]
    suite: Suite = problems["a+b"].suite
    assert [program_language(cand, suite) for cand, _ in jobs] == ["python", "nodejs", "bash"]
    with pytest.raises(ValueError, match=r"s\.jsonl:1: unknown language 'cobol'"):
        bio.read_samples(
            write_jsonl(tmp_path / "s.jsonl", [{"problem_id": "a+b", "program": "", "language": "cobol"}]), problems
        )


def test_the_shipped_set_follows_the_schema() -> None:
    problems = bio.load_problems(SHIPPED / "problems.jsonl")
    samples = bio.read_samples(SHIPPED / "samples.jsonl", problems)
    assert len(problems) >= 20 and all(len(p.spec.tests) >= 10 for p in problems.values())
    expects = {s.line["expect"] for s in samples}
    assert expects >= {"passed", "failed", "timeout", "oom", "error", "output_limit"}
    assert any(p.spec.checker is not None for p in problems.values())
    for p in problems.values():  # every problem has a correct program and a wrong one
        mine = [s.line["expect"] for s in samples if s.problem_id == p.spec.problem_id]
        assert "passed" in mine and set(mine) - {"passed"}, p.spec.problem_id


# -- the command, on a fake sandbox -------------------------------------------------------------
def program_answer(job: SandboxJob) -> RawRun:
    """A runner's answer: every case passes unless the program says WRONG (case 1 fails) or CRASH."""
    header, candidate, files = read_job(io.BytesIO(job.stdin))  # type: ignore[misc]
    program = b"".join(candidate.values())
    assert header.config.kind == "program" and header.config.program is not None
    cases = load_cases(files, header.config.program.cases)
    outcome = "wrong_answer" if b"WRONG" in program else "runtime_error" if b"CRASH" in program else "passed"
    records = [
        CaseRecord(name=c.name, outcome=outcome if i == 0 else "passed", summary="s") for i, c in enumerate(cases)
    ]
    failed = [r for r in records if r.outcome != "passed"]
    result = JobResult(
        runner="pytest",
        exit_code=int(bool(failed)),
        counts=JobCounts(expected=len(records), passed=len(records) - len(failed), failed=len(failed)),
        failures=[FailureRecord(test_id=f"case {r.name}", kind=r.outcome, summary="s") for r in failed],
        failures_total=len(failed),
        kind="program",
        cases=records,
        kernel=KERNEL_OF[job.limits.runtime],  # what a runner under the job's runtime observes
    )
    return raw_run(format_result_line(header.nonce, False, result))


class _Engine:
    """The engine connection the command opens and closes (the image comes from the stand-in
    `build`): closing it is all it may be asked to do."""

    def close(self) -> None:
        pass


@pytest.fixture
def fake_sandbox(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[SandboxJob], RawRun]], list[Limits]]:
    seen: list[Limits] = []

    def install(handler: Callable[[SandboxJob], RawRun]) -> list[Limits]:
        def pooled(
            cls: type[Verifier], pool: Any = None, *, limits: Limits, image: Any = None, admission: Any = None
        ) -> Verifier:
            seen.append(limits)
            return Verifier(backend=FakeBackend(handler), image="x", limits=limits)

        monkeypatch.setattr(Verifier, "pooled", classmethod(pooled))
        monkeypatch.setattr("verifier.sandbox.image.build", lambda *a, **k: ("x", False))
        monkeypatch.setattr("verifier.sandbox.image.image_tag", lambda *a, **k: "x")
        monkeypatch.setattr("verifier.sandbox.docker_engine.connect", _Engine)
        return seen

    return install


def bench(*args: str) -> Any:
    return CliRunner().invoke(app, ["bench", "io", *args, "--workers", "1"])


def summary(output: str) -> dict[str, Any]:
    return dict(json.loads(output[output.index("{") :]))


def test_pass_at_k_status_counts_and_results_file(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(program_answer)
    problems = write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, {**A_PLUS_B, "problem_id": "b"}])
    rows = [
        {"problem_id": "a+b", "program": "print(1)", "model": "m1"},
        {"problem_id": "a+b", "program": "print(2) # WRONG"},
        {"problem_id": "b", "program": "print(3) # CRASH"},
        {"problem_id": "b", "program": "print(4)"},
    ]
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    done = bench(str(samples), "--problems", str(problems), "--k", "1,2,3")
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["pass@1"] == 0.5 and out["pass@2"] == 1.0 and "pass@3" in out["pass@k_not_reported"]
    assert out["statuses"]["passed"] == 2 and out["statuses"]["failed"] == 1 and out["statuses"]["error"] == 1
    assert (out["samples"], out["problems_attempted"], out["cases_run"]) == (4, 2, 8)
    results = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["passed", "failed", "error", "passed"]
    assert results[0]["model"] == "m1" and results[1]["first_failure"] == "case 1: s"
    assert (results[1]["cases_passed"], results[1]["cases"]) == (1, 2)
    report = bench(str(samples), "--problems", str(problems), "--k", "1,2", "--report", str(tmp_path / "r"))
    assert report.exit_code == 0, report.output  # served from the store, then the report of its files
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["bench"] == "io" and data["pass_at_k"] == {"pass@1": 0.5, "pass@2": 1.0}
    assert data["failure_kinds"] == {"wrong_answer": 1, "runtime_error": 1} and data["jobs"] == 4
    assert [p["task"] for p in data["problems"]] == ["a+b", "b"] and (tmp_path / "r" / "index.html").is_file()


def test_bad_input_exits_2_with_one_line(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(program_answer)
    problems = write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"problem_id": "a+b", "program": "x"}])
    for args, error in (
        ([str(tmp_path / "none.jsonl"), "--problems", str(problems)], "samples file"),
        ([str(samples), "--problems", str(tmp_path / "none.jsonl")], "problems file"),
        ([str(samples), "--problems", str(write_jsonl(tmp_path / "bad.jsonl", [{"problem_id": "x"}]))], "bad.jsonl:1"),
        ([str(samples), "--problems", str(problems), "--policy", "warm"], "--policy"),
        ([str(samples), "--problems", str(problems), "--k", "0"], "--k must be positive"),
        ([str(samples), "--problems", str(problems), "--report", str(problems)], "--report: "),
        ([str(samples), "--problems", str(problems), "--ray", "auto", "--policy", "cold"], "--policy cold"),
    ):
        done = bench(*args)
        assert done.exit_code == 2 and error in done.stderr and "Traceback" not in done.output, (args, done.output)


def test_unverifiable_samples_exit_2(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(lambda job: raw_run(b"", exit_code=1))  # no result: infra_error
    problems = write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"problem_id": "a+b", "program": "print(3)"}])
    done = bench(str(samples), "--problems", str(problems))
    assert done.exit_code == 2 and "1 sample(s) could not be verified" in done.stderr
    assert summary(done.stdout)["statuses"]["infra_error"] == 1


def test_timeout_is_the_case_limit_of_problems_that_set_none(tmp_path: Path) -> None:
    own = {**A_PLUS_B, "problem_id": "own", "time_limit_s": 0.5}
    problems = bio.load_problems(write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, own]), time_limit_s=7.0)
    limits = {key: p.suite.program.time_limit_s for key, p in problems.items() if p.suite.program is not None}
    assert limits == {"a+b": 7.0, "own": 0.5}
    assert bio.bench_limits(problems.values(), "gvisor").runtime == "gvisor"


def test_timeout_runtime_and_a_rerun_that_verifies_only_what_is_missing(
    tmp_path: Path, fake_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs: list[SandboxJob] = []

    def counted(job: SandboxJob) -> RawRun:
        jobs.append(job)
        return program_answer(job)

    seen = fake_sandbox(counted)
    runtimes: list[str] = []
    monkeypatch.setattr(
        "verifier.cli.bench_common.require_runtime",
        lambda limits, *, client=None: runtimes.append(limits.runtime),
    )
    problems = write_jsonl(tmp_path / "p.jsonl", [A_PLUS_B, {**A_PLUS_B, "problem_id": "b"}])
    rows = [{"problem_id": p, "program": f"print({i})"} for i, p in enumerate(["a+b", "a+b", "b"])]
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    args = [str(samples), "--problems", str(problems), "--timeout", "0.25", "--runtime", "gvisor"]
    first = bench(*args)
    assert first.exit_code == 0, first.output
    assert len(jobs) == 3 and runtimes == ["gvisor"] and seen[0].runtime == "gvisor"
    assert {read_job(io.BytesIO(j.stdin))[0].config.program.time_limit_s for j in jobs} == {0.25}  # type: ignore[index, union-attr]
    store = Path(f"{samples}_evidence.jsonl")
    kept = store.read_text().splitlines()[:1]
    store.write_text(kept[0] + "\n")  # as if the run had stopped after its first result
    again = bench(*args)
    assert again.exit_code == 0 and len(jobs) == 5  # the two missing ones only
    assert (summary(again.stdout)["verified"], summary(again.stdout)["from_store"]) == (2, 1)
    assert bench(*args, "--no-cache").exit_code == 0 and len(jobs) == 8
    bad = bench(*[a if a != "0.25" else "0" for a in args])
    assert bad.exit_code == 2 and "--timeout must be more than 0" in bad.stderr and len(jobs) == 8
