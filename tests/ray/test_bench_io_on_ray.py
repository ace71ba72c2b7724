"""`verifier bench io --ray ADDRESS`: the programs run on the warm pools of the session's real
two-node Ray cluster (the harness's Ray seam, as `bench humaneval --ray`), with the verdicts a
local run gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.ray.cluster import LocalRayCluster
from verifier.cli import app
from verifier.evidence import Evidence

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ray")]

A_PLUS_B = {"problem_id": "a+b", "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 5\n", "output": "7\n"}]}
PROGRAMS = {
    "right": "a, b = map(int, input().split())\nprint(a + b)\n",
    "wrong": "a, b = map(int, input().split())\nprint(a - b)\n",
    "crash": "raise SystemExit(3)\n",
}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_bench_io_runs_on_the_clusters_nodes(ray_cluster: LocalRayCluster, sandbox_image: str, tmp_path: Path) -> None:
    problems = write_jsonl(tmp_path / "problems.jsonl", [A_PLUS_B])
    names = ("right", "wrong", "crash", "right")
    rows = [{"problem_id": "a+b", "program": PROGRAMS[name], "name": name} for name in names]
    samples = write_jsonl(tmp_path / "samples.jsonl", rows)
    args = ["bench", "io", str(samples), "--problems", str(problems), "--k", "1", "--ray", ray_cluster.address]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    assert summary["ray"] == {"nodes": 2, "reruns": 0, "lost": []}
    assert summary["workers"] >= 2  # the cluster's slots: one pool per node
    statuses = summary["statuses"]
    assert (statuses["passed"], statuses["failed"], statuses["error"]) == (2, 1, 1)
    results = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["passed", "failed", "error", "passed"]
    store = [Evidence.model_validate_json(x) for x in Path(f"{samples}_evidence.jsonl").read_text().splitlines()]
    assert len(store) == 3 and all(ev.node is not None and "@ray:" in ev.node for ev in store)
