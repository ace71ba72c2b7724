from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from verifier.agents.recorder import ENV_URL, NoDatabase, RunRecorder, ToolCall, default_url
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


def call(
    run: str | None,
    eid: str,
    latency: float,
    status: str = "failed",
    *,
    iteration: int = 0,
    thread_id: str | None = None,
    scope: str | None = None,
) -> ToolCall:
    return ToolCall(
        grading_run_id=run,
        iteration=iteration,
        evidence_id=eid,
        candidate_sha256="c",
        candidate_is_latest=True,
        ok=False,
        status=status,
        cached=False,
        latency_s=latency,
        thread_id=thread_id,
        scope=scope,
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


def test_evidence_and_its_tool_call_are_written_in_one_transaction() -> None:
    rec = RunRecorder("sqlite://")
    broken = dataclasses.replace(call("r1", "e1", 0.1), status=None)  # type: ignore[arg-type]  # NOT NULL
    with pytest.raises(sa.exc.IntegrityError):
        rec.record(evidence("e1"), broken)
    assert rec.evidence("e1") is None and rec.tool_calls("r1") == []  # neither half was kept


@pytest.mark.parametrize("status", [Status.INFRA_ERROR, Status.OVERLOADED])
def test_only_verdicts_are_stored_as_evidence(status: Status) -> None:
    rec = RunRecorder("sqlite://")
    rec.record(evidence("e1", status), call("r1", "e1", 0.1, status.value))
    assert rec.evidence("e1") is None
    assert [c.status for c in rec.tool_calls("r1")] == [status.value]  # the call still counts
    rec.record(evidence("e1", Status.FAILED), call("r1", "e1", 0.1))
    assert rec.evidence("e1") == evidence("e1", Status.FAILED)  # the later verdict is not blocked


def test_an_evaluation_binds_the_tool_calls_of_its_grading_pass() -> None:
    rec = RunRecorder("sqlite://")
    rec.record(evidence("e1"), call(None, "e1", 0.1, thread_id="t", scope="s"))
    rec.record(evidence("e2"), call(None, "e2", 0.1, thread_id="other", scope="s"))
    rec.record(evidence("e3"), call(None, "e3", 0.1, thread_id="t", scope="another-rubric"))
    rec.record(evidence("e4"), call(None, "e4", 0.1, thread_id="t", scope="s", iteration=1))
    rec.on_evaluation(evaluation("run-1", 0, "needs_revision"), thread_id="t", scope="s")
    assert [c.evidence_id for c in rec.tool_calls("run-1")] == ["e1"]
    rec.on_evaluation(evaluation("run-1", 1, "satisfied"), thread_id="t", scope="s")
    assert [c.evidence_id for c in rec.tool_calls("run-1")] == ["e1", "e4"]
    assert rec.latest_run(thread_id="t", scope="s") == "run-1"
    assert rec.latest_run(thread_id="other", scope="s") is None


def test_the_latest_run_of_a_thread_is_the_last_evaluated() -> None:
    rec = RunRecorder("sqlite://")
    rec.on_evaluation(evaluation("old", 0, "satisfied"), thread_id="t", scope="s")
    rec.on_evaluation(evaluation("new", 0, "needs_revision"), thread_id="t", scope="s")
    assert rec.latest_run(thread_id="t", scope="s") == "new"


def test_default_database_is_a_documented_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_URL, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_url() == f"sqlite:///{tmp_path}/state/verifier/runs.db"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_url() == f"sqlite:///{Path.home()}/.local/state/verifier/runs.db"
    monkeypatch.setenv(ENV_URL, "sqlite:///elsewhere.db")
    assert default_url() == "sqlite:///elsewhere.db"
    assert RunRecorder.__init__.__defaults__ == (None,)  # no in-memory default any more


def test_opening_a_missing_database_without_create_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "runs.db"
    with pytest.raises(NoDatabase):
        RunRecorder(f"sqlite:///{target}", create=False)
    assert not target.parent.exists()


def test_a_database_of_the_previous_schema_gets_the_new_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "CREATE TABLE evaluations (grading_run_id VARCHAR(64), iteration INTEGER, result VARCHAR(32) NOT NULL,"
                " explanation TEXT NOT NULL, criteria TEXT NOT NULL, unverified BOOLEAN NOT NULL,"
                " recorded_at FLOAT NOT NULL, PRIMARY KEY (grading_run_id, iteration))"
            )
        )
    engine.dispose()
    rec = RunRecorder(url)
    rec.on_evaluation(evaluation("r", 0, "satisfied"), thread_id="t", scope="s")
    assert rec.latest_run(thread_id="t", scope="s") == "r"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verifier", "runs", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_report_on_a_missing_database_says_so_and_creates_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != ENV_URL} | {"XDG_STATE_HOME": str(tmp_path / "state")}
    done = cli("report", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no run database at" in done.stderr and "no grading runs recorded" in done.stderr
    assert not (tmp_path / "state").exists()
    here = cli("report", "--db", f"sqlite:///{tmp_path}/nope.db", env=env)
    assert here.returncode == 2 and not (tmp_path / "nope.db").exists()


def test_cli_report_reads_the_default_database_the_recorder_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_URL)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    RunRecorder().on_evaluation(evaluation("r1", 0, "satisfied"))
    done = cli("report", "--json", env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"] == 1
    missing = cli("override", "no-such-run", env=dict(os.environ))
    assert missing.returncode == 2 and "no grading run no-such-run" in missing.stderr


def test_runs_list_prints_ids_whole_and_show_takes_a_unique_prefix(tmp_path: Path) -> None:
    """The id `runs list` shows is the one `runs show` takes, whole on a narrow terminal too; a
    unique start of it is enough, and an ambiguous one is a one-line error naming the matches."""
    from typer.testing import CliRunner

    from verifier.cli import app

    url = f"sqlite:///{tmp_path}/runs.db"
    rec = RunRecorder(url)
    ids = [
        "3f2a9c1e-5b7d-4e11-9a0c-0123456789ab",
        "3f2a9c1e-5b7d-4e11-9a0c-ba9876543210",
        "77aa01bc-0000-4000-8000-0f0f0f0f0f0f",
    ]
    for run_id in ids:
        rec.on_evaluation(evaluation(run_id, 0, "satisfied"))
    rec.close()

    def runs(*args: str) -> Any:
        return CliRunner().invoke(app, ["runs", *args, "--db", url], terminal_width=60, env={"COLUMNS": "60"})

    listed = runs("list")
    assert listed.exit_code == 0, listed.output
    for run_id in ids:
        assert run_id in listed.stdout, listed.stdout
    shown = runs("show", "77aa")
    assert shown.exit_code == 0, shown.output
    assert ids[2] in shown.stdout
    ambiguous = runs("show", "3f2a9c1e")
    assert ambiguous.exit_code == 2
    (line,) = ambiguous.stderr.strip().splitlines()
    assert line.startswith("error:") and "start of 2 runs" in line and ids[0] in line
    assert runs("override", "77aa0", "--verdict", "accepted").exit_code == 0
    assert "no grading run zz" in runs("show", "zz").stderr
