"""Instances that end `overloaded` (the machine's doing: no sandbox slot in time) are retried with
backoff, counted apart, never verdicts, never errors, and exit 3 (issue 37 section 4); the one
change's review says so too (exit 3, one line). The review is stood in (tests/review/batch_stand_in.py);
the backoff is `verifier.batch.Backoff`, the bench's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.review.batch_stand_in import TEST, StandIn
from tests.review.repos import make_repo
from verifier import batch as bench_batch
from verifier.cli import app
from verifier.errors import HostOverloaded
from verifier.review import batch
from verifier.review.batch import BatchRequest, InstanceStatus, run_batch
from verifier.review.instances import load_instances, load_predictions


def _files(tmp_path: Path, patches: dict[str, str]) -> tuple[Path, Path]:
    if not (tmp_path / "repos").exists():
        make_repo(tmp_path / "repos" / "acme" / "r", {"tests/test_a.py": "def test_fix():\n    assert False\n"})
    rows = [{"instance_id": i, "repo": "acme/r", "base_commit": "main", "patch": "", "test_patch": "tp\n",
             "FAIL_TO_PASS": json.dumps([TEST]), "PASS_TO_PASS": "[]"} for i in patches]  # fmt: skip
    preds = [{"instance_id": i, "model_patch": p, "model_name_or_path": "m"} for i, p in patches.items()]
    (tmp_path / "i.json").write_text(json.dumps(rows))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    return tmp_path / "i.json", tmp_path / "p.json"


def _batch(tmp_path: Path, patches: dict[str, str], **over: object) -> tuple[list[batch.BatchSummary], Path]:
    inst, pred = _files(tmp_path, patches)
    found = load_instances(inst, tmp_path / "repos")
    req = BatchRequest(instances=found, predictions=load_predictions(pred, found), out_dir=tmp_path / "out",
                       backoff_s=0.0, **over)  # type: ignore[arg-type]  # fmt: skip
    return run_batch(req), tmp_path / "out"


def test_an_overloaded_instance_is_retried_with_backoff_and_counted_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = StandIn()
    monkeypatch.setattr(batch, "review", stand_in)
    [s], out = _batch(tmp_path, {"a": "GOOD\n", "b": "GOOD BUSYONCE\n", "c": "GOOD BUSY\n", "d": "bad\n"})
    assert (s.total, s.resolved, s.not_resolved, s.errors, s.overloaded) == (4, 2, 1, 0, 1)
    assert s.instances["c"].status == InstanceStatus.OVERLOADED and "too busy" in s.instances["c"].reason
    assert "c" not in s.resolved_ids
    # b: one overloaded try, then its verdict; c: the first try and every retry, then no more
    assert stand_in.calls.count("GOOD BUSYONCE\n") == 2
    assert stand_in.calls.count("GOOD BUSY\n") == 1 + bench_batch.OVERLOADED_RETRIES
    b = json.loads((out / "m" / "b" / "report.json").read_text())
    c = json.loads((out / "m" / "c" / "report.json").read_text())
    assert (b["status"], b["attempts"]) == ("resolved", 2)
    assert (c["status"], c["fault"], c["attempts"], c["evidence"]) == (
        "overloaded",
        "host",
        1 + bench_batch.OVERLOADED_RETRIES,
        None,
    )
    # SWE-bench's run report: no verdict for c, so it is an error there (as a harness error is), never unresolved
    run = json.loads((out / "swebench" / "m.verifier.json").read_text())
    assert run["error_ids"] == ["c"] and "c" not in run["unresolved_ids"]


def test_an_overloaded_report_is_not_final_the_next_run_reviews_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = StandIn()
    monkeypatch.setattr(batch, "review", stand_in)
    _batch(tmp_path, {"a": "GOOD\n", "c": "GOOD BUSY\n"}, overloaded_retries=0)
    assert sorted(stand_in.calls) == sorted(["GOOD BUSY\n", "GOOD\n"])  # no retry: overloaded_retries=0
    stand_in.calls.clear()
    [s], _ = _batch(tmp_path, {"a": "GOOD\n", "c": "GOOD BUSY\n"}, overloaded_retries=0)
    assert stand_in.calls == ["GOOD BUSY\n"]  # a's verdict is reused, c is tried again
    assert (s.from_earlier_runs, s.overloaded) == (1, 1)


def test_ctrl_c_ends_the_pause_before_a_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop (Ctrl-C) during a pause ends it and every retry after it, at once."""
    import threading

    stop = threading.Event()
    stop.set()
    busy = bench_batch.Backoff(retries=5, first_s=3600.0, stop=stop)
    assert busy.wait() is False


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        app(args)
    code = exited.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


def test_cli_batch_exits_3_only_when_some_stayed_overloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(batch, "review", StandIn())
    monkeypatch.setattr(bench_batch, "BACKOFF_S", 0.0)
    inst, pred = _files(tmp_path, {"a": "GOOD\n", "b": "GOOD BUSYONCE\n", "c": "GOOD BUSY\n"})
    args = ["review", "batch", "--instances", str(inst), "--predictions", str(pred), "--repos-dir",
            str(tmp_path / "repos"), "--no-build"]  # fmt: skip
    code, err = _cli([*args, "--out-dir", str(tmp_path / "busy")], capsys)
    assert code == 3, err
    assert "2/3 resolved" in err and "0 errors, 1 overloaded" in err and "2 attempts" in err
    assert "1 instance(s) stayed overloaded" in err.splitlines()[-1]

    inst, pred = _files(tmp_path / "calm", {"a": "GOOD\n", "b": "GOOD BUSYONCE\n"})
    args = ["review", "batch", "--instances", str(inst), "--predictions", str(pred), "--repos-dir",
            str(tmp_path / "calm" / "repos"), "--no-build", "--out-dir", str(tmp_path / "calm" / "out")]  # fmt: skip
    code, err = _cli(args, capsys)
    assert code == 0, err  # overloaded once, then resolved: not exit 3


def test_cli_review_of_one_change_says_the_machine_was_busy_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Attack: a review whose runs got no sandbox slot in time ended in a traceback (HostOverloaded
    was caught by no one); it is one line and exit 3 (the host's doing: try again)."""
    import verifier.review

    def busy(*_a: object, **_k: object) -> object:
        raise HostOverloaded("no sandbox slot came free within 600 s (2 of 2 in use)")

    monkeypatch.setattr(verifier.review, "review", busy)
    (tmp_path / "repo").mkdir()
    code, err = _cli(["review", str(tmp_path / "repo"), "--base", "main", "--no-build"], capsys)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: the machine was too busy") and "Traceback" not in err, err


def test_every_review_of_a_batch_waits_on_the_batchs_one_admission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 §4: the batch's sandbox jobs queue on one `Admission`, which its progress line
    reads (how many wait for a machine-wide slot, how long they waited)."""
    from verifier.sandbox.admission import Admission

    stand_in = StandIn()
    monkeypatch.setattr(batch, "review", stand_in)
    slots = Admission(1, folder=tmp_path / "slots")
    _batch(tmp_path, {"a": "GOOD\n", "b": "GOOD BUSYONCE\n"}, admission=slots)
    assert len(stand_in.admissions) == 3 and all(a is slots for a in stand_in.admissions)


def test_a_review_run_waits_on_the_admission_it_is_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from verifier.review import sandbox_runs
    from verifier.sandbox.admission import Admission

    given: list[object] = []

    class Engine:
        def __init__(self, *, admission: object = None) -> None:
            given.append(admission)

        def run(self, job: object) -> object:
            raise HostOverloaded("stand-in: no slot")

    monkeypatch.setattr(sandbox_runs, "DockerBackend", Engine)
    monkeypatch.setattr(sandbox_runs, "payload", lambda *a: b"")
    slots = Admission(1, folder=tmp_path)
    plan = type("Plan", (), {"environment": type("Env", (), {"image_ref": "x"})(), "side": "head"})()
    with pytest.raises(HostOverloaded):
        sandbox_runs.run_one(plan, batch.REVIEW_LIMITS, "label", None, slots)  # type: ignore[arg-type]
    assert given == [slots]
