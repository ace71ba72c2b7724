"""A review batch resumes only from reports bound to what they judged (issue 32, section 4).

Each attacker leaves something in a batch's folder that an earlier version took as a finished
verdict: a hand-written `resolved` report, another instance's or another model's report, the
report of a patch the model has since replaced, a symlink to a report elsewhere, a folder or an
oversized file named report.json, evidence edited after the review, a base ref that moved. Every
one must be reviewed again, its stale files replaced, and the summary must say how many verdicts
came from earlier runs. Model names map to folders one to one: `acme/m` and `acme__m` are two.

The review itself is a stand-in here (unit tests of the batch's own logic): it builds evidence
as the service does (digests of the patch files it was given, the base resolved in a real git
repository, `review_id` over `identity`), resolved exactly when the patch contains "GOOD", and
counts its calls. The real engine runs the same batch in tests/review/test_instances_engine.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.review.batch_stand_in import TEST, StandIn
from tests.review.repos import add_branch, git, make_repo
from verifier.review import batch
from verifier.review.batch import BatchRequest, run_batch
from verifier.review.instances import Instance, Prediction


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> StandIn:
    fake = StandIn()
    monkeypatch.setattr(batch, "review", fake)
    return fake


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"tests/test_a.py": "def test_fix():\n    assert False\n"})


def inst(repo: Path, iid: str = "a", base: str = "main") -> Instance:
    return Instance.model_validate({
        "instance_id": iid, "repo": str(repo), "repo_given": "acme/repo", "base_commit": base,
        "test_patch": f"test patch of {iid}\n", "FAIL_TO_PASS": [TEST], "PASS_TO_PASS": [],
    })  # fmt: skip


def pred(iid: str = "a", patch: str | None = "GOOD patch\n", model: str = "acme/m") -> Prediction:
    return Prediction(instance_id=iid, model_patch=patch, model_name_or_path=model)


def run(out: Path, instances: list[Instance], preds: list[Prediction]) -> list[Any]:
    return run_batch(BatchRequest(instances={i.instance_id: i for i in instances}, predictions=preds, out_dir=out))


def test_a_genuine_report_is_reused_and_the_summary_says_so(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    first = run(out, [inst(repo)], [pred()])[0]
    assert (len(stand_in.calls), first.resolved, first.from_earlier_runs) == (1, 1, 0)
    again = run(out, [inst(repo)], [pred()])[0]
    assert len(stand_in.calls) == 1  # nothing reviewed again
    assert (again.resolved, again.from_earlier_runs) == (1, 1) and again.instances["a"].from_earlier_run
    assert json.loads((out / "acme__m" / "summary.json").read_text())["from_earlier_runs"] == 1


def test_a_hand_written_resolved_report_is_reviewed_again(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    where = tmp_path / "out" / "acme__m" / "a"
    where.mkdir(parents=True)
    forged = {"instance_id": "a", "model": "acme/m", "status": "resolved", "resolved": True, "reason": "resolved",
              "started_at": "", "duration_s": 0.0}  # fmt: skip
    (where / "report.json").write_text(json.dumps(forged))
    summary = run(tmp_path / "out", [inst(repo)], [pred(patch="bad patch\n")])[0]
    assert len(stand_in.calls) == 1
    assert (summary.resolved, summary.not_resolved, summary.from_earlier_runs) == (0, 1, 0)


def test_a_resubmitted_patch_is_reviewed_again_and_its_files_replaced(
    tmp_path: Path, repo: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred(patch="GOOD patch\n")])
    (out / "acme__m" / "a" / "test_output.txt").write_text("stale\n")
    summary = run(out, [inst(repo)], [pred(patch="bad patch\n")])[0]
    assert stand_in.calls == ["GOOD patch\n", "bad patch\n"]
    assert (summary.resolved, summary.from_earlier_runs) == (0, 0)
    assert (out / "acme__m" / "a" / "patch.diff").read_text() == "bad patch\n"
    assert "stale" not in (out / "acme__m" / "a" / "test_output.txt").read_text()


def test_an_empty_resubmission_leaves_no_file_of_the_old_review(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred(patch="GOOD patch\n")])
    summary = run(out, [inst(repo)], [pred(patch="")])[0]
    assert (summary.errors, summary.resolved) == (1, 0)
    assert not (out / "acme__m" / "a" / "test_output.txt").exists()  # the GOOD patch's runs are gone
    assert (out / "acme__m" / "a" / "patch.diff").read_text() == ""


def test_another_instances_report_is_not_taken(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo, "b")], [pred("b")])
    (out / "acme__m" / "a").mkdir()
    (out / "acme__m" / "a" / "report.json").write_bytes((out / "acme__m" / "b" / "report.json").read_bytes())
    summary = run(out, [inst(repo, "a"), inst(repo, "b")], [pred("a", patch="bad patch\n"), pred("b")])[0]
    assert stand_in.calls == ["GOOD patch\n", "bad patch\n"]
    assert summary.resolved_ids == ["b"] and summary.from_earlier_runs == 1


def test_another_models_report_is_not_taken_and_the_summary_names_the_model(
    tmp_path: Path, repo: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred(model="acme/m")])
    (out / "other" / "a").mkdir(parents=True)
    (out / "other" / "a" / "report.json").write_bytes((out / "acme__m" / "a" / "report.json").read_bytes())
    summary = run(out, [inst(repo)], [pred(model="other")])[0]
    assert len(stand_in.calls) == 2
    assert summary.model == "other" and summary.from_earlier_runs == 0
    assert json.loads((out / "other" / "summary.json").read_text())["model"] == "other"


def test_a_symlinked_report_is_not_followed(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred()])
    genuine = tmp_path / "elsewhere.json"
    (out / "acme__m" / "a" / "report.json").rename(genuine)
    (out / "acme__m" / "a" / "report.json").symlink_to(genuine)
    before = genuine.read_bytes()
    summary = run(out, [inst(repo)], [pred()])[0]
    assert len(stand_in.calls) == 2 and summary.from_earlier_runs == 0
    assert genuine.read_bytes() == before  # replaced, never written through
    assert not (out / "acme__m" / "a" / "report.json").is_symlink()


def test_a_symlinked_instance_folder_does_not_reach_another_instance(
    tmp_path: Path, repo: Path, stand_in: StandIn
) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo, "b")], [pred("b")])
    b_files = {p.name: p.read_bytes() for p in (out / "acme__m" / "b").iterdir()}
    (out / "acme__m" / "a").symlink_to(out / "acme__m" / "b")
    summary = run(out, [inst(repo, "a"), inst(repo, "b")], [pred("a", patch="bad patch\n"), pred("b")])[0]
    assert stand_in.calls == ["GOOD patch\n", "bad patch\n"]
    assert summary.instances["a"].status == "not_resolved" and summary.resolved_ids == ["b"]
    assert {p.name: p.read_bytes() for p in (out / "acme__m" / "b").iterdir()} == b_files
    assert not (out / "acme__m" / "a").is_symlink()


def test_a_report_json_folder_is_replaced(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    (tmp_path / "out" / "acme__m" / "a" / "report.json").mkdir(parents=True)
    summary = run(tmp_path / "out", [inst(repo)], [pred()])[0]
    assert len(stand_in.calls) == 1 and summary.resolved == 1
    assert (tmp_path / "out" / "acme__m" / "a" / "report.json").is_file()


def test_an_oversized_report_is_not_read(
    tmp_path: Path, repo: Path, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred()])
    report = out / "acme__m" / "a" / "report.json"
    report.write_bytes(report.read_bytes() + b" " * 200_000)  # still the same JSON document
    monkeypatch.setattr(batch, "MAX_REPORT_BYTES", 100_000, raising=False)
    summary = run(out, [inst(repo)], [pred()])[0]
    assert len(stand_in.calls) == 2 and summary.from_earlier_runs == 0


def test_edited_evidence_is_not_taken(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred(patch="bad patch\n")])
    path = out / "acme__m" / "a" / "report.json"
    rep = json.loads(path.read_text())
    rep |= {"status": "resolved", "resolved": True, "reason": "resolved: 1 FAIL_TO_PASS"}
    rep["evidence"] |= {"ok": True, "reason": "resolved: 1 FAIL_TO_PASS"}
    rep["evidence"]["resolution"] |= {"resolved": True, "unmet": []}
    rep["evidence"]["tests"][0]["head"]["outcome"] = "passed"
    rep["evidence"]["tests"][0]["classification"] = "fixed"
    path.write_text(json.dumps(rep))
    summary = run(out, [inst(repo)], [pred(patch="bad patch\n")])[0]
    assert len(stand_in.calls) == 2 and summary.resolved == 0


def test_a_base_ref_that_moved_is_reviewed_again(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    run(out, [inst(repo)], [pred()])
    add_branch(repo, "moved", {"tests/test_a.py": "def test_fix():\n    assert True\n"})
    git(repo, "update-ref", "refs/heads/main", "moved")
    summary = run(out, [inst(repo)], [pred()])[0]
    assert len(stand_in.calls) == 2 and summary.from_earlier_runs == 0


def test_model_names_that_swe_bench_maps_to_one_folder_get_two(tmp_path: Path, repo: Path, stand_in: StandIn) -> None:
    out = tmp_path / "out"
    summaries = run(out, [inst(repo)], [pred(model="acme/m"), pred(model="acme__m", patch="bad patch\n")])
    assert len(stand_in.calls) == 2
    assert [(s.model, s.total, s.resolved) for s in summaries] == [("acme/m", 1, 1), ("acme__m", 1, 0)]
    folders = {json.loads(p.read_text())["model"]: p.parent for p in out.glob("*/summary.json")}
    assert set(folders) == {"acme/m", "acme__m"} and len(set(folders.values())) == 2
