"""SWE-bench-shaped instances on the real engine, through the CLI: a batch of the example's four
cases (resolved, wrong fix, patch that does not apply, PASS_TO_PASS broken), its resume, and
`--expect` on a single review."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.review.conftest import EXAMPLE

#: The module fixtures run once, so one worker runs the module.
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("review-instances")]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "verifier", "review", *args], capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def swe(sandbox_image: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The four cases' batch, run once through the CLI."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import make_instances  # examples/review/make_instances.py
    finally:
        sys.path.remove(str(EXAMPLE))
    root = tmp_path_factory.mktemp("swe")
    instances, predictions = make_instances.make(root)
    args = ("batch", "--instances", str(instances), "--predictions", str(predictions), "--out-dir", str(root / "out"))
    done = cli(*args, "--max-workers", "3")
    return {"root": root, "args": args, "done": done, "expected": make_instances.EXPECTED, "module": make_instances}


def test_batch_summary_and_per_instance_logs(swe: dict[str, Any]) -> None:
    done, out = swe["done"], swe["root"] / "out" / "example-model"
    assert done.returncode == 1, done.stderr  # not every instance is resolved
    summary = json.loads((out / "summary.json").read_text())
    statuses = {iid.split("-")[-1]: line["status"] for iid, line in summary["instances"].items()}
    assert statuses == swe["expected"], summary
    assert (summary["total"], summary["resolved"], summary["resolved_rate"]) == (4, 1, 0.25)
    assert "does not apply" in summary["instances"]["rangeset-garbled"]["reason"]
    p2p = json.loads((out / "rangeset-p2p" / "report.json").read_text())
    assert p2p["evidence"]["resolution"]["unmet"] == ["tests/test_sets.py::test_contains_both_ends"]
    wrong = json.loads((out / "rangeset-wrong" / "report.json").read_text())["evidence"]["resolution"]
    assert "tests/test_sets.py::test_normalize_merges_adjacent_ranges" in wrong["unmet"]
    fixed = json.loads((out / "rangeset-fix" / "report.json").read_text())
    assert fixed["resolved"] and fixed["evidence"]["ok"] and fixed["evidence"]["test_patch_sha256"]
    for case in ("fix", "wrong", "p2p"):
        folder = out / f"rangeset-{case}"
        assert {"patch.diff", "test_patch.diff", "report.json", "test_output.txt"} <= {p.name for p in folder.iterdir()}
        assert "===== head run" in (folder / "test_output.txt").read_text()
    assert done.stderr.count("[4/4]") == 1 and "1/4 resolved" in done.stderr
    # one environment for the repository: at most the first instance built it, the others reused it
    runs = [r for case in ("fix", "wrong", "p2p") for r in load(out, case)["evidence"]["runs"]]
    assert len({r["environment"]["digest"] for r in runs}) == 1
    assert sum(r["environment"]["built"] for r in runs) <= 1


def load(out: Path, case: str) -> dict[str, Any]:
    return dict(json.loads((out / f"rangeset-{case}" / "report.json").read_text()))


def test_a_second_run_reviews_nothing_again(swe: dict[str, Any]) -> None:
    out = swe["root"] / "out" / "example-model"
    before = {p: p.stat().st_mtime_ns for p in out.glob("*/report.json")}
    assert len(before) == 4
    again = cli(*swe["args"])
    assert again.returncode == 1, again.stderr
    assert again.stderr.count("(earlier report)") == 4, again.stderr
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/report.json")} == before
    assert json.loads((out / "summary.json").read_text())["resolved_ids"] == ["rangeset-fix"]


def test_expect_on_a_single_review(swe: dict[str, Any], tmp_path: Path) -> None:
    mod = swe["module"]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"FAIL_TO_PASS": mod.FAIL_TO_PASS, "PASS_TO_PASS": mod.PASS_TO_PASS}))
    repo = str(swe["root"] / "rangeset")
    done = cli(repo, "--base", "main", "--head", "fix-adjacent-ranges", "--expect", str(spec), "-f", "json")
    assert done.returncode == 0, done.stderr
    ev = json.loads(done.stdout)
    assert ev["ok"] and ev["resolution"]["resolved"] and ev["resolution"]["unmet"] == []
    assert ev["reason"].startswith("resolved: 1 FAIL_TO_PASS and 3 PASS_TO_PASS")
    # the same spec on main itself: nothing fixed, so not resolved, though nothing regressed
    unfixed = cli(repo, "--base", "main", "--head", "main", "--expect", str(spec), "-f", "json")
    assert unfixed.returncode == 1, unfixed.stderr
    assert json.loads(unfixed.stdout)["resolution"]["unmet"] == mod.FAIL_TO_PASS


@pytest.fixture(scope="module")
def swe_files(sandbox_image: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """SWE-bench's files as they ship: `repo` is owner/name (a clone under --repos-dir), instances a
    JSON list, predictions a JSON object keyed by instance id; run once through the CLI."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import make_instances  # examples/review/make_instances.py
        import make_repo  # examples/review/make_repo.py
    finally:
        sys.path.remove(str(EXAMPLE))
    root = tmp_path_factory.mktemp("swe-files")
    clone = root / "repos" / "example" / "rangeset"  # the DIR/owner/name layout
    make_repo.make(clone)
    instances, predictions = make_instances.records(clone, "rangeset", model="acme/example")
    for inst in instances:
        inst["repo"] = "example/rangeset"
    by_case = {p["instance_id"].split("-")[-1]: p for p in predictions}
    by_case["p2p"]["model_patch"] = ""  # an empty patch: not run, as the harness does
    (root / "instances.json").write_text(json.dumps(instances, indent=2))
    (root / "preds.json").write_text(json.dumps({p["instance_id"]: p for p in predictions}, indent=2))
    args = ("batch", "--instances", str(root / "instances.json"), "--repos-dir", str(root / "repos"),
            "--out-dir", str(root / "out"), "--run-id", "r1")  # fmt: skip
    done = cli(*args, "--predictions", str(root / "preds.json"), "--max-workers", "2")
    return {"root": root, "args": args, "done": done, "predictions": predictions}


def test_swe_bench_files_as_they_ship_and_its_own_report(swe_files: dict[str, Any]) -> None:
    from tests.review import swebench_shapes as shapes

    root, done = swe_files["root"], swe_files["done"]
    assert done.returncode == 1, done.stderr
    assert f"repository example/rangeset: {root / 'repos' / 'example' / 'rangeset'}" in done.stderr
    ours = json.loads((root / "out" / "acme__example" / "summary.json").read_text())
    assert (ours["model"], ours["total"], ours["resolved_ids"], ours["from_earlier_runs"]) == (
        "acme/example", 4, ["rangeset-fix"], 0,
    )  # fmt: skip
    swe = root / "out" / "swebench"
    mod = sys.modules["make_instances"]
    p2p_ids = mod.PASS_TO_PASS
    fix = swe / shapes.INSTANCE_REPORT.format(run_id="r1", model="acme__example", instance_id="rangeset-fix")
    assert fix.read_text() == json.dumps(
        shapes.instance_report("rangeset-fix", True, (mod.FAIL_TO_PASS, []), (p2p_ids, [])), indent=4
    )
    wrong = json.loads(
        (
            swe / shapes.INSTANCE_REPORT.format(run_id="r1", model="acme__example", instance_id="rangeset-wrong")
        ).read_text()
    )
    status = wrong["rangeset-wrong"]["tests_status"]
    assert wrong["rangeset-wrong"]["resolved"] is False and status["FAIL_TO_PASS"]["failure"] == mod.FAIL_TO_PASS
    assert list(wrong["rangeset-wrong"]) == list(shapes.instance_report("x", False, ([], []), ([], []))["x"])
    run = json.loads((swe / shapes.RUN_REPORT.format(model="acme__example", run_id="r1")).read_text())
    assert run == shapes.run_report(
        total=4, submitted=[f"rangeset-{c}" for c in ("fix", "wrong", "garbled", "p2p")], resolved=["rangeset-fix"],
        unresolved=["rangeset-wrong"], empty=["rangeset-p2p"], errors=["rangeset-garbled"], incomplete=[],
    )  # fmt: skip
    # shared files: no host path, no host name, no clone URI
    for path in (root / "out").rglob("*.json"):
        text = path.read_text()
        assert str(root) not in text and "file://" not in text, path
        assert len(socket.gethostname()) < 6 or socket.gethostname() not in text, path


@pytest.mark.parametrize("fmt", ["list", "jsonl"])
def test_the_same_predictions_in_another_format_review_nothing_again(swe_files: dict[str, Any], fmt: str) -> None:
    root, preds = swe_files["root"], swe_files["predictions"]
    path = root / f"preds.{fmt}"
    path.write_text(json.dumps(preds) if fmt == "list" else "".join(json.dumps(p) + "\n" for p in preds))
    again = cli(*swe_files["args"], "--predictions", str(path))
    assert again.returncode == 1, again.stderr
    assert again.stderr.count("(earlier report)") == 4 and "4 from earlier runs" in again.stderr, again.stderr
