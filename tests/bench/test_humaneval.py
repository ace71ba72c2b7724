"""The HumanEval harness: suites from check(), dedup, the reference's output format."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.bench import humaneval as he
from verifier.bench.passk import pass_at_ks

PROBLEMS = he.load_problems()


def test_all_164_problems_make_suites_that_compile() -> None:
    assert len(PROBLEMS) == 164
    for problem in PROBLEMS.values():
        suite = problem.suite
        assert suite.runner == "direct" and problem.format == "humaneval"
        compile(suite.files["test_humaneval.py"], problem.task_id, "exec")


def test_identical_samples_are_verified_once() -> None:
    p = PROBLEMS["HumanEval/0"].line
    samples = [he.Sample("HumanEval/0", p["canonical_solution"], {}) for _ in range(3)]
    samples.append(he.Sample("HumanEval/0", "    return False\n", {}))
    jobs, mapping = he.unique_jobs(samples, PROBLEMS)
    assert len(jobs) == 2 and mapping == [0, 0, 0, 1]


def test_pass_at_k_per_task() -> None:
    samples = [he.Sample("A", "", {}), he.Sample("A", "", {}), he.Sample("B", "", {}), he.Sample("B", "", {})]
    result = pass_at_ks([s.task_id for s in samples], [True, False, False, False], ks=(1, 2, 3))
    assert result.scores == {"pass@1": 0.25, "pass@2": 0.5}
    assert set(result.not_reported) == {"pass@3"}


def test_coverage_against_the_problem_file() -> None:
    samples = [he.Sample("HumanEval/0", "", {}), he.Sample("HumanEval/0", "", {}), he.Sample("HumanEval/1", "", {})]
    assert he.coverage(samples, PROBLEMS) == (2, 164)


@pytest.mark.docker
@pytest.mark.slow
def test_cli_matches_the_reference_format(sandbox_image: str, tmp_path: Path) -> None:
    """Canonical solutions pass, including problems whose check uses prompt helpers (32: poly)
    or calls the function by name (33); a wrong completion fails; the output has the
    reference's fields; --report makes the run's page from its real evidence."""
    tasks = ["HumanEval/0", "HumanEval/32", "HumanEval/33", "HumanEval/53"]
    lines = [{"task_id": t, "completion": PROBLEMS[t].line["canonical_solution"]} for t in tasks]
    lines.append({"task_id": "HumanEval/0", "completion": "    return True\n"})
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = tmp_path / "report"
    command = ["bench", "humaneval", str(samples), "--workers", "2", "--report", str(report)]
    done = subprocess.run(
        [sys.executable, "-m", "verifier", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in rows] == [True, True, True, True, False]
    assert rows[-1]["result"].startswith("failed: ") and rows[0]["result"] == "passed"
    assert all({"task_id", "completion", "result", "passed", "evidence_id", "status"} <= set(r) for r in rows)
    data = json.loads((report / "report.json").read_text())  # --report: the page of the run's real evidence
    assert data["jobs"] == 5 and data["failure_kinds"] == {"assertion": 1} and data["missing_evidence"] == 0
    assert all(v > 0 for v in data["latency"]["values"]) and data["time_s"]["tests_s"] > 0
    assert (report / "index.html").is_file() and (report / "summary.png").is_file()


def test_cli_rejects_bad_samples(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/999", "completion": "x"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "verifier", "bench", "humaneval", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "unknown task_id" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_limits_from_the_canonical_solutions_in_the_sandbox(sandbox_image: str, tmp_path: Path) -> None:
    """The canonical solutions are measured in the real sandbox, cached by evidence_id, and each
    problem's samples run under max(min, factor x canonical); a loop ends at that limit."""
    from verifier.bench.calibrate import LimitRule, charged_s
    from verifier.bench.store import EvidenceStore
    from verifier.evidence import Evidence

    problems = {t: PROBLEMS[t] for t in ("HumanEval/0", "HumanEval/53")}
    samples = [
        he.Sample("HumanEval/0", PROBLEMS["HumanEval/0"].line["canonical_solution"], {}),
        he.Sample("HumanEval/53", "    while True:\n        pass\n", {}),
    ]
    work = he.Workload(problems, samples)
    rule = LimitRule(factor=4.0, min_s=0.5)
    options = he.Options(ks=(1,), workers=2, image=sandbox_image, progress=False, limit_rule=rule)
    with EvidenceStore(tmp_path / "canonical.jsonl") as cache:
        run = he.evaluate(work, options, canonical_cache=cache)
    calibration = run.summary["limits_from_canonical"]
    assert (calibration["measured"], calibration["from_cache"], calibration["kept_fixed"]) == (2, 0, [])
    measured = {
        ev.suite_sha256: ev
        for ev in map(Evidence.model_validate_json, (tmp_path / "canonical.jsonl").read_text().splitlines())
    }
    assert all(ev.ok and ev.limits.call_timeout_s == 60.0 for ev in measured.values())
    passed, looped = run.evidence
    assert passed.ok and looped.status.value == "timeout"
    for problem, ev in zip((problems["HumanEval/0"], problems["HumanEval/53"]), run.evidence, strict=True):
        assert ev.limits.call_timeout_s == rule.limit(charged_s(measured[problem.suite.sha256]))
    with EvidenceStore(tmp_path / "canonical.jsonl") as cache:
        again = he.evaluate(work, options, canonical_cache=cache)
    assert again.summary["limits_from_canonical"]["measured"] == 0  # served from the cache


@pytest.mark.docker
def test_plus_passes_an_answer_ordered_by_this_sandboxs_string_hashes(sandbox_image: str, tmp_path: Path) -> None:
    """A canonical solution whose answer follows string hashes (a set's order): the host keeps
    its answers under its own fixed seed, the sandbox's seed is another, and a candidate with
    the canonical's own algorithm still passes plus: an answer that is not the host's is asked
    of the canonical solution in the sandbox, as before answers were shipped. A wrong one fails."""
    from tests.bench.test_plus import _hash_ordered
    from verifier.bench import plus as plus_mod

    problem = _hash_ordered()
    made = plus_mod.make({problem.task_id: problem}, count=30, cache=tmp_path)[0][problem.task_id]
    assert sum(e is not None and len(ast.literal_eval(e)) >= 3 for e in made.expected) >= 5
    same = "    return ''.join(set(strings))\n"
    wrong = "    return ''.join(sorted(set(strings)))[::-1]\n"
    samples = [he.Sample(problem.task_id, same, {}), he.Sample(problem.task_id, wrong, {})]
    work = he.Workload({problem.task_id: problem}, samples)
    options = he.Options(ks=(1,), workers=1, image=sandbox_image, progress=False, plus=True, plus_inputs=30)
    run = he.evaluate(work, options, plus_cache=tmp_path)
    assert [ev.ok for ev in run.plus_evidence] == [True, False], [ev.reason for ev in run.plus_evidence]


@pytest.mark.docker
def test_plus_rejects_a_mutant_that_passes_base_and_names_its_input(sandbox_image: str, tmp_path: Path) -> None:
    """`--plus` in the real sandbox: HumanEval/40's seeded mutant (bench/mutants.py: j from i - 1,
    so an element can count twice) passes the problem's own check; the plus inputs, made on the
    host, reject it, and the input that did is the evidence's falsifying example, one of the
    inputs made. The canonical solution passes both."""
    from verifier.bench import plus as plus_mod

    task = "HumanEval/40"
    canonical = PROBLEMS[task].line["canonical_solution"]
    mutant = canonical.replace("range(i + 1, len(l))", "range(i - 1, len(l))")
    assert mutant != canonical
    samples = [he.Sample(task, canonical, {}), he.Sample(task, mutant, {})]
    work = he.Workload({task: PROBLEMS[task]}, samples)
    options = he.Options(ks=(1, 2), workers=2, image=sandbox_image, progress=False, plus=True, plus_inputs=100)
    run = he.evaluate(work, options, plus_cache=tmp_path)
    assert [ev.ok for ev in run.evidence] == [True, True]  # the base tests cannot tell them apart
    assert [ev.ok for ev in run.plus_evidence] == [True, False]
    (failure,) = run.plus_evidence[1].failures
    assert failure.test_id.endswith("test_plus.py::test_plus") and failure.kind.value == "assertion"
    example = failure.falsifying_example or ""
    assert example.startswith("test_plus(args=[[") and example.endswith("]])"), example
    made = plus_mod.make({task: PROBLEMS[task]}, count=100, cache=tmp_path)[0][task]
    shown = example.removeprefix("test_plus(args=").removesuffix(")")
    assert shown in made.inputs  # one of the inputs made on the host, as it was shipped
    summary = run.summary
    assert summary["base_vs_plus"]["pass@1"] == {"base": 1.0, "base+plus": 0.5}
    assert summary["plus"]["inputs"]["total"] == 100 and summary["plus"]["passed"] == 1
    rows = tmp_path / "results.jsonl"
    he.write_results(rows, run, details=True)
    wrong = json.loads(rows.read_text().splitlines()[1])
    assert (wrong["passed"], wrong["plus_passed"], wrong["plus_status"]) == (True, False, "failed")
    assert wrong["plus_failures"][0]["falsifying_example"] == example
