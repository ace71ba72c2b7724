"""Instance specs (pure): SWE-bench's records read and refused line by line, and `resolved` decided
by `classify.verdict` from the FAIL_TO_PASS / PASS_TO_PASS lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.errors import InvalidInput, SandboxUnavailable
from verifier.review.batch import InstanceReport, InstanceStatus, summarize
from verifier.review.classify import Table, expectations, verdict
from verifier.review.instances import BadRecord, Prediction, load_instances, load_predictions, load_spec
from verifier.review.provenance import Provenance
from verifier.review.review_evidence import Outcome, ReviewCounts, SideResult, TestClass, TestRow

P, F, E, A = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.ABSENT


def row(test_id: str, base: Outcome | None, head: Outcome | None, rerun: Outcome | None = None) -> TestRow:
    return TestRow(
        test_id=test_id,
        provenance=Provenance.UNCHANGED,
        base=None if base is None else SideResult(outcome=base),
        head=None if head is None else SideResult(outcome=head, rerun=rerun),
        classification=TestClass.STILL_PASSING,
        blocking=False,
    )


def table(*rows: TestRow) -> Table:
    return Table(rows=list(rows), counts=ReviewCounts(total=len(rows), still_passing=len(rows)))


RUNS = ({"base": "", "head": ""}, {"base": 3, "head": 3})


@pytest.mark.parametrize(
    ("rows", "f2p", "p2p", "resolved"),
    [
        ([row("t::fix", F, P), row("t::keep", P, P)], ["t::fix"], ["t::keep"], True),
        ([row("t::fix", None, P)], ["t::fix"], [], True),  # absent on the base (added by the test patch)
        ([row("t::fix", E, P)], ["t::fix"], [], True),  # cannot even import on the base
        ([row("t::fix", P, P)], ["t::fix"], [], False),  # already passed on the base: fixes nothing
        ([row("t::fix", F, F)], ["t::fix"], [], False),  # still failing
        ([row("t::fix", F, F, rerun=P)], ["t::fix"], [], False),  # a rerun that disagrees is no pass
        ([row("t::other", F, P)], ["t::fix"], [], False),  # a listed test never collected fails
        ([row("t::fix", F, P), row("t::keep", P, F)], ["t::fix"], ["t::keep"], False),  # PASS_TO_PASS broken
        ([row("t::fix", F, P), row("t::keep", F, P)], ["t::fix"], ["t::keep"], True),  # head decides, as SWE-bench
        ([row("t::fix[1]", F, P)], ["t::fix"], [], False),  # node ids match exactly, no prefixes
    ],
)
def test_resolved_means_every_listed_test_met_its_expectation(
    rows: list[TestRow], f2p: list[str], p2p: list[str], resolved: bool
) -> None:
    t = table(*rows)
    expected = expectations(t, f2p, p2p)
    ok, reason = verdict(t, *RUNS, expected)
    assert ok is resolved, reason
    assert reason.startswith("resolved:" if resolved else "not resolved:")
    unmet = [e.test_id for e in expected if not e.met]
    assert bool(unmet) is not resolved
    assert all(f"{u} (" in reason for u in unmet)  # the tests that decided it are named


def test_a_blocking_row_is_not_resolved_even_when_the_lists_are_met() -> None:
    blocking = row("t::other", P, F).model_copy(update={"classification": TestClass.BROKEN, "blocking": True})
    t = Table(rows=[row("t::fix", F, P), blocking], counts=ReviewCounts(total=2, blocking=1, broken=1))
    ok, reason = verdict(t, *RUNS, expectations(t, ["t::fix"], []))
    assert not ok and reason.startswith("not resolved: the listed tests met the spec, but not ok: 1 broken")


def test_without_a_spec_the_verdict_is_unchanged() -> None:
    t = table(row("t::a", P, P))
    assert verdict(t, *RUNS) == verdict(t, *RUNS, None)
    assert verdict(t, *RUNS)[1].startswith("no regressions")


def test_spec_reads_lists_and_swe_bench_encoded_strings(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"FAIL_TO_PASS": ["a::b"], "PASS_TO_PASS": json.dumps(["c::d"]), "repo": "x"}))
    s = load_spec(spec)
    assert (s.fail_to_pass, s.pass_to_pass) == (["a::b"], ["c::d"])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[1]", "not a JSON object"),
        ('{"FAIL_TO_PASS": []}', "field PASS_TO_PASS: Field required"),
        ('{"FAIL_TO_PASS": "a::b", "PASS_TO_PASS": []}', "field FAIL_TO_PASS: Value error, not a JSON list"),
        ('{"FAIL_TO_PASS": [3], "PASS_TO_PASS": []}', "field FAIL_TO_PASS.0"),
        ("{", "not JSON"),
    ],
)
def test_a_bad_spec_is_one_message_naming_the_field(tmp_path: Path, text: str, words: str) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(text)
    with pytest.raises(BadRecord, match=r"spec\.json") as info:
        load_spec(spec)
    assert words in str(info.value)


def instance(iid: str, repo: Path, **over: object) -> dict[str, object]:
    rec = {"instance_id": iid, "repo": str(repo), "base_commit": "main", "patch": "", "test_patch": "diff",
           "FAIL_TO_PASS": '["t::a"]', "PASS_TO_PASS": "[]"}  # fmt: skip
    return rec | over


def jsonl(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([instance("a", Path(".")), "{oops"], "line 2: not JSON"),
        ([instance("a", Path("."), test_patch=None)], "line 1: field test_patch"),
        ([instance("a", Path("."), FAIL_TO_PASS="x")], "line 1: field FAIL_TO_PASS"),
        ([instance("a/../b", Path("."))], "line 1: field instance_id"),
        ([instance("a", Path(".")), instance("a", Path("."))], "line 2: field instance_id: a appears twice"),
        ([instance("a", Path("nowhere"))], "line 1: field repo: nowhere is not a folder"),
    ],
)
def test_instances_are_refused_naming_file_line_and_field(tmp_path: Path, rows: list[object], words: str) -> None:
    with pytest.raises(BadRecord, match=r"instances\.jsonl") as info:
        load_instances(jsonl(tmp_path / "instances.jsonl", *rows))
    assert words in str(info.value)


def test_predictions_must_name_known_instances_once(tmp_path: Path) -> None:
    found = load_instances(jsonl(tmp_path / "i.jsonl", instance("a", Path("."))))
    assert found["a"].repo == str(tmp_path.resolve())  # relative to the file's folder
    pred = {"instance_id": "a", "model_patch": "x", "model_name_or_path": "org/m"}
    assert load_predictions(jsonl(tmp_path / "p.jsonl", pred), found)[0].model_folder == "org__m"
    with pytest.raises(BadRecord, match="line 2: field instance_id: a second prediction"):
        load_predictions(jsonl(tmp_path / "p.jsonl", pred, pred), found)
    with pytest.raises(BadRecord, match="line 1: field instance_id: b is not in the instances"):
        load_predictions(jsonl(tmp_path / "p.jsonl", pred | {"instance_id": "b"}), found)


def test_summary_counts_add_up() -> None:
    def rep(iid: str, status: InstanceStatus) -> InstanceReport:
        return InstanceReport(instance_id=iid, model="m", status=status, resolved=status == "resolved",
                              reason="r", started_at="", duration_s=0.0)  # fmt: skip

    s = summarize("m", [rep("b", InstanceStatus.RESOLVED), rep("a", InstanceStatus.ERROR),
                        rep("c", InstanceStatus.NOT_RESOLVED), rep("d", InstanceStatus.RESOLVED)])  # fmt: skip
    assert (s.total, s.resolved, s.not_resolved, s.errors, s.resolved_rate) == (4, 2, 1, 1, 0.5)
    assert s.resolved_ids == ["b", "d"] and list(s.instances) == ["a", "b", "c", "d"]


def test_cli_refuses_a_bad_batch_before_any_sandbox(tmp_path: Path) -> None:
    inst = jsonl(tmp_path / "instances.jsonl", instance("a", tmp_path), instance("b", tmp_path, base_commit=""))
    preds = jsonl(tmp_path / "preds.jsonl", {"instance_id": "a", "model_patch": "x", "model_name_or_path": "m"})
    cmd = [sys.executable, "-m", "verifier", "review", "batch", "--instances", str(inst), "--predictions", str(preds),
           "--out-dir", str(tmp_path / "out"), "--no-build"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "instances.jsonl line 2: field base_commit" in lines[0], done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["batch", "--instances", "i.jsonl", "--gold"], "--out-dir is required"),
        (["batch", "--instances", "i.jsonl", "--out-dir", "o"], "--predictions (a file of predictions) or --gold"),
        (["batch", "--predictions", "p.jsonl", "--out-dir", "o"], "--instances is required"),
        (["batch", "--instances", "nowhere.jsonl", "--gold", "--out-dir", "o"], "--instances: nowhere.jsonl"),
        (["batch", "REPO", "--gold"], "unexpected extra argument(s) (REPO)"),
        (["REPO", "--base", "main", "--expect", "spec.json"], "--expect: spec.json: not JSON"),
    ],
)
def test_cli_batch_and_expect_options_are_one_line_errors(tmp_path: Path, args: list[str], words: str) -> None:
    (tmp_path / "REPO").mkdir()
    (tmp_path / "spec.json").write_text("{")
    jsonl(tmp_path / "i.jsonl", instance("a", tmp_path))
    cmd = [sys.executable, "-m", "verifier", "review", *args, "--no-build"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["REPO", "--instances", "i.jsonl", "--gold", "--out-dir", "o"], "REPO: not with --instances"),
        (["--instances", "i.jsonl", "--gold"], "--out-dir is required"),
        (["--instances", "nowhere.jsonl", "--gold", "--out-dir", "o"], "--instances: nowhere.jsonl: cannot read"),
    ],
)
def test_the_old_batch_spelling_still_works_with_a_deprecation_note(
    tmp_path: Path, args: list[str], words: str
) -> None:
    """`verifier review --instances ...` (before `verifier review batch`) is kept for a release:
    one note line naming the new command, then the batch's own handling of the options."""
    (tmp_path / "REPO").mkdir()
    jsonl(tmp_path / "i.jsonl", instance("a", tmp_path))
    cmd = [sys.executable, "-m", "verifier", "review", *args, "--no-build"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, done.stderr
    assert "deprecated: use `verifier review batch`" in lines[0] and words in lines[1], done.stderr


def test_each_command_has_its_own_help() -> None:
    """`verifier review --help` is the one change's help (the batch options hidden), `verifier
    review batch --help` the batch's."""

    def help_of(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "verifier", *args, "--help"], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    single, batch = help_of("review"), help_of("review", "batch")
    assert "--base" in single and "verifier review batch" in single
    assert not any(o in single for o in ("--instances", "--predictions", "--repos-dir", "--max-workers"))
    assert "verifier review batch [OPTIONS]" in batch
    assert all(o in batch for o in ("--instances", "--predictions", "--repos-dir", "--max-workers", "--gold"))
    assert not any(o in batch for o in ("--base", "--head", "--expect", "--tests"))
    assert "review batch" in help_of()


def test_markdown_says_not_resolved_and_names_the_unmet_tests() -> None:
    from tests.review.fake_evidence import evidence
    from verifier.review.reports.markdown import render
    from verifier.review.review_evidence import Resolution

    t = table(row("t::fix", F, F))
    expected = expectations(t, ["t::fix"], [])
    res = Resolution(resolved=False, fail_to_pass=1, pass_to_pass=0, unmet=["t::fix"], tests=expected)
    text = render(evidence(t.rows).model_copy(update={"resolution": res}))
    assert text.startswith("## ❌ verifier review: NOT RESOLVED")
    assert "`t::fix` (fail_to_pass: failed → failed)" in text


@pytest.mark.parametrize(
    ("raised", "fault", "retried"),
    [
        (InvalidInput("the patch does not apply"), "input", False),
        (SandboxUnavailable("no result"), "infrastructure", True),
        (OSError("disk full"), "infrastructure", True),
    ],
)
def test_an_instance_that_cannot_be_reviewed_is_an_error_and_only_ours_are_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception, fault: str, retried: bool
) -> None:
    from verifier.review import batch

    def fails(_req: object) -> None:
        raise raised

    monkeypatch.setattr(batch, "review", fails)
    inst = load_instances(jsonl(tmp_path / "i.jsonl", instance("a", tmp_path)))["a"]
    pred = Prediction(instance_id="a", model_patch="diff", model_name_or_path="m")
    rep = batch.review_instance(inst, pred, tmp_path / "m" / "a", batch.REVIEW_LIMITS, None)
    assert (rep.status, rep.fault, rep.resolved) == (InstanceStatus.ERROR, fault, False)
    (tmp_path / "report.json").write_text(rep.model_dump_json())
    assert (batch.earlier_report(tmp_path / "report.json", inst, pred)[0] is None) is retried
