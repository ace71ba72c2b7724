"""SWE-bench-shaped instances on the real engine, through the CLI: a batch of the example's four
cases (resolved, wrong fix, patch that does not apply, PASS_TO_PASS broken), its resume, and
`--expect` on a single review."""

from __future__ import annotations

import json
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
    args = ("--instances", str(instances), "--predictions", str(predictions), "--out-dir", str(root / "out"))
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
