from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from verifier.agents.recorder import RunRecorder, ToolCall
from verifier.evidence import Evidence, Status
from verifier.limits import Limits


def evaluation(run: str, iteration: int, result: str) -> dict[str, Any]:
    return {
        "grading_run_id": run,
        "iteration": iteration,
        "result": result,
        "explanation": "x",
        "criteria": [{"name": "c", "passed": result == "satisfied"}],
        "unverified": False,
    }


def evidence(eid: str, status: Status = Status.FAILED) -> Evidence:
    return Evidence(
        evidence_id=eid,
        ok=False,
        status=status,
        reason="r",
        candidate_sha256="c",
        suite_sha256="s",
        image_id="i",
        limits=Limits(),
        verifier_version="0",
    )


def call(run: str, eid: str, latency: float, status: str = "failed") -> ToolCall:
    return ToolCall(
        grading_run_id=run,
        iteration=0,
        evidence_id=eid,
        candidate_sha256="c",
        candidate_is_latest=True,
        ok=False,
        status=status,
        cached=False,
        latency_s=latency,
    )


def test_duplicate_delivery_writes_one_row(tmp_path: Path) -> None:
    rec = RunRecorder(f"sqlite:///{tmp_path}/runs.db")
    for _ in range(3):
        rec.on_evaluation(evaluation("r1", 0, "needs_revision"))
        rec.record(evidence("e1"), call("r1", "e1", 0.5))
    assert len(rec.evaluations("r1")) == 1
    assert rec.evidence("e1") == evidence("e1")
    assert rec.report().runs == 1


def test_eight_concurrent_runs_record_everything(tmp_path: Path) -> None:
    rec = RunRecorder(f"sqlite:///{tmp_path}/runs.db")
    errors: list[BaseException] = []

    def one_run(n: int) -> None:
        try:
            for it in range(3):
                rec.on_evaluation(evaluation(f"run-{n}", it, "satisfied" if it == 2 else "needs_revision"))
                rec.record(evidence(f"e-{n}-{it}"), call(f"run-{n}", f"e-{n}-{it}", 0.1))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one_run, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    rep = rec.report()
    assert rep.runs == 8 and rep.tool_calls == 24 and rep.final_pass_rate == 1.0
    assert all(len(rec.evaluations(f"run-{n}")) == 3 for n in range(8))


def test_report_matches_a_hand_computed_fixture() -> None:
    rec = RunRecorder("sqlite://")
    # run a: satisfied at once; b: revised once then satisfied; c: hits the cap; d: grader error.
    for run, results in {
        "a": ["satisfied"],
        "b": ["needs_revision", "satisfied"],
        "c": ["needs_revision", "needs_revision", "max_iterations_reached"],
        "d": ["grader_error"],
    }.items():
        for i, r in enumerate(results):
            rec.on_evaluation(evaluation(run, i, r))
    for i, (latency, status) in enumerate(
        [(1.0, "passed"), (2.0, "failed"), (3.0, "passed"), (4.0, "infra_error"), (5.0, "failed")]
    ):
        rec.record(
            evidence(f"e{i}", Status(status) if status != "passed" else Status.FAILED),
            call("b", f"e{i}", latency, status),
        )
    rec.override("b", "rejected", "a reviewer found a bug the suite missed")
    rep = rec.report()
    assert rep.runs == 4
    assert rep.first_pass_rate == pytest.approx(1 / 4)
    assert rep.final_pass_rate == pytest.approx(2 / 4)
    assert rep.mean_grading_rounds == pytest.approx((1 + 2 + 3 + 1) / 4)
    assert rep.terminal_status_share == {"grader_error": 0.25, "max_iterations_reached": 0.25, "satisfied": 0.5}
    assert rep.tool_calls == 5 and rep.tool_error_rate == pytest.approx(1 / 5)
    assert rep.tool_latency_p50_s == pytest.approx(3.0)
    assert rep.tool_latency_p95_s == pytest.approx(4.8)
    assert (rep.satisfied_runs, rep.overturned_satisfied) == (2, 1)


def test_cli_report_and_override(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path}/runs.db"
    rec = RunRecorder(url)
    rec.on_evaluation(evaluation("r1", 0, "satisfied"))
    run = [sys.executable, "-m", "verifier", "runs"]
    assert subprocess.run([*run, "override", "r1", "--db", url], capture_output=True).returncode == 0
    out = subprocess.run([*run, "report", "--db", url, "--json"], capture_output=True, text=True)
    assert json.loads(out.stdout)["overturned_satisfied"] == 1
    human = subprocess.run([*run, "report", "--db", url], capture_output=True, text=True)
    assert "first-pass rate" in human.stdout and "100.0%" in human.stdout
