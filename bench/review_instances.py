"""Throughput of `verifier review batch` (SWE-bench-shaped batches), against plain pytest.

Builds COPIES copies of the example repository (examples/review/make_instances.py: four
instances each: resolved, wrong fix, patch that does not apply, PASS_TO_PASS broken) and
GENERATED generated repositories (8 test modules of 25 tests, the same four cases), so
4 x (COPIES + GENERATED) instances, then in one run:

- batch:  `verifier review batch --instances ... --predictions ... --out-dir ... --max-workers W`
          through the CLI, wall time end to end (a warm-up review first: the sandbox image and the
          example's environment image exist, as on any machine that has reviewed once);
- resume: the same command again (every instance has a report: nothing is reviewed);
- host:   for each instance whose patches apply, its head tree (base + test_patch + model_patch)
          written to disk and run by plain `python -m pytest` on the host, one after the other
          (the interpreter running this script: the project's venv, which has pytest and Hypothesis).

Reports instances per minute; the batch's wall per reviewed instance (the instances whose patch
does not apply take under a second) against plain pytest on the same head tree; the whole batch
against all those pytest runs in a row; and one instance's own review time (with W at once)
against one pytest run. The review runs 3-4 sessions per instance (base, head, and the base's
own tests on both sides' code, as the test patch edits test modules; the base's own run is cached
per base), plain pytest one.

    python bench/review_instances.py [--copies 3] [--generated 2] [--max-workers 2]

Writes bench/results/review-instances-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "review"))

import make_instances  # type: ignore[import-not-found]  # noqa: E402

from verifier.errors import InvalidInput  # noqa: E402
from verifier.review import ReviewRequest  # noqa: E402
from verifier.review.gitread import write_files  # noqa: E402
from verifier.review.service import plan_trees, read_trees  # noqa: E402

GEN_CODE = """def clamp(x, lo, hi):
    return max(lo, min(x, hi - 1))


def scale(x, k):
    return x * k
"""


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid",
    }  # fmt: skip
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True, text=True).stdout


def generated(dest: Path, name: str, modules: int = 8) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """A generated repository (`modules` test modules of 25 tests) with the example's four cases:
    the test patch adds `tests/test_top.py::test_clamp_top`, the fix includes the upper limit."""
    (dest / "src" / "gen").mkdir(parents=True)
    (dest / "tests").mkdir()
    (dest / "pyproject.toml").write_text('[project]\nname = "gen"\nversion = "1"\n')
    (dest / "src" / "gen" / "__init__.py").write_text(GEN_CODE)
    for m in range(modules):
        body = "import pytest\n\nfrom gen import clamp, scale\n\n\n@pytest.mark.parametrize('x', range(20))\n"
        body += "def test_scale(x):\n    assert scale(x, 3) == 3 * x\n\n"
        body += "".join(f"\ndef test_clamp_{i}():\n    assert clamp({i}, 0, 10) == {i}\n" for i in range(5))
        (dest / "tests" / f"test_gen_{m}.py").write_text(body)
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "base")
    base = _git(dest, "rev-parse", "HEAD").strip()
    test_patch = "\n".join([
        "diff --git a/tests/test_top.py b/tests/test_top.py", "new file mode 100644", "--- /dev/null",
        "+++ b/tests/test_top.py", "@@ -0,0 +1,5 @@", "+from gen import clamp", "+", "+",
        "+def test_clamp_top():", "+    assert clamp(10, 0, 10) == 10", "",
    ])  # fmt: skip
    fix = _edit_diff(dest, GEN_CODE.replace("min(x, hi - 1)", "min(x, hi)"))
    wrong = _edit_diff(dest, GEN_CODE.replace("min(x, hi - 1))", "min(x, hi - 1))  # tidy"))
    p2p = _edit_diff(dest, GEN_CODE.replace("min(x, hi - 1))", "min(x, hi)) + (1 if x == 3 else 0)"))
    garbled = fix.replace(" def clamp(", " def clip(")
    f2p, keep = ["tests/test_top.py::test_clamp_top"], [f"tests/test_gen_0.py::test_clamp_{i}" for i in range(5)]
    instances, predictions = [], []
    for case, patch in {"fix": fix, "wrong": wrong, "garbled": garbled, "p2p": p2p}.items():
        iid = f"{name}-{case}"
        instances.append({"instance_id": iid, "repo": str(dest), "base_commit": base, "patch": fix,
                          "test_patch": test_patch, "FAIL_TO_PASS": f2p, "PASS_TO_PASS": keep})  # fmt: skip
        predictions.append({"instance_id": iid, "model_patch": patch, "model_name_or_path": "example-model"})
    return instances, predictions


def _edit_diff(repo: Path, code: str) -> str:
    """The diff of writing `code` to the package, made by git (then undone)."""
    (repo / "src" / "gen" / "__init__.py").write_text(code)
    diff = _git(repo, "diff")
    _git(repo, "checkout", "--", ".")
    return diff


def cli(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "verifier", "review", *args], capture_output=True, text=True)
    return time.monotonic() - t, done


def host_pytest(inst: dict[str, Any], pred: dict[str, Any], work: Path) -> float | None:
    """Plain pytest on the instance's head tree; None when its patches do not apply."""
    folder = work / "host" / inst["instance_id"]
    folder.mkdir(parents=True)
    (folder / "test.diff").write_text(inst["test_patch"])
    (folder / "model.diff").write_text(pred["model_patch"])
    req = ReviewRequest(
        repo=Path(inst["repo"]), base=inst["base_commit"], head=None,
        patch=folder / "model.diff", test_patch=folder / "test.diff",
    )  # fmt: skip
    try:
        trees = read_trees(req)
    except InvalidInput:
        return None
    _, _, head_files = plan_trees(trees, "head")
    write_files(head_files, folder / "tree")
    env = {"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join([str(folder / "tree" / "src"), str(folder / "tree")])}  # fmt: skip
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder / "tree", env=env,
                   capture_output=True)  # fmt: skip
    return time.monotonic() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--generated", type=int, default=2, help="generated repositories (four instances each)")
    ap.add_argument("--max-workers", type=int, default=2)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="verifier-bench-instances-") as tmp:
        work = Path(tmp)
        instances, predictions = make_instances.make(work / "swe", copies=opts.copies)
        insts = [json.loads(line) for line in instances.read_text().splitlines()]
        preds = {p["instance_id"]: p for p in map(json.loads, predictions.read_text().splitlines())}
        for g in range(opts.generated):
            more, more_preds = generated(work / "swe" / f"gen{g + 1}", f"gen{g + 1}")
            insts += more
            preds |= {p["instance_id"]: p for p in more_preds}
        make_instances.write_jsonl(instances, insts)
        make_instances.write_jsonl(predictions, list(preds.values()))
        warm_s, warm = cli(str(work / "swe" / "rangeset1"), "--base", "main", "--head", "fix-adjacent-ranges")
        out = work / "out"
        args = ("batch", "--instances", str(instances), "--predictions", str(predictions), "--out-dir", str(out))
        batch_s, done = cli(*args, "--max-workers", str(opts.max_workers))
        resume_s, again = cli(*args)
        summary = json.loads((out / "example-model" / "summary.json").read_text())
        reports = [json.loads(p.read_text()) for p in (out / "example-model").glob("*/report.json")]
        reviewed = [r["duration_s"] for r in reports if r["evidence"] is not None]
        host = [h for i in insts if (h := host_pytest(i, preds[i["instance_id"]], work)) is not None]
    n = len(insts)
    result = {
        "what": "verifier review batch: SWE-bench-shaped batch of the example library's four cases",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_at_end": os.getloadavg(), "note": "shared machine: other test runs and CPU hogs ran"},
        "instances": n, "max_workers": opts.max_workers,
        "repositories": {"example_copies": opts.copies, "generated": opts.generated},
        "warmup_review_s": round(warm_s, 2), "warmup_exit": warm.returncode,
        "batch_wall_s": round(batch_s, 2), "batch_exit": done.returncode,
        "instances_per_minute": round(n / batch_s * 60, 2),
        "wall_per_instance_s": round(batch_s / n, 2),
        "review_s_mean": round(statistics.mean(reviewed), 2), "reviews": len(reviewed),
        "host_pytest_s_mean": round(statistics.mean(host), 3), "host_trees": len(host),
        "host_pytest_s_median": round(statistics.median(host), 3),
        "host_pytest_total_s": round(sum(host), 2),
        "wall_per_reviewed_instance_s": round(batch_s / len(reviewed), 2),
        "cost_over_pytest_per_reviewed_instance_s": round(batch_s / len(reviewed) - statistics.mean(host), 2),
        "ratio_batch_wall_to_host_pytest_total": round(batch_s / sum(host), 2),
        "ratio_review_s_mean_to_host_pytest_mean": round(statistics.mean(reviewed) / statistics.mean(host), 2),
        "resume_wall_s": round(resume_s, 2), "resume_exit": again.returncode,
        "resume_rereviewed": sum(
            1 for line in again.stderr.splitlines() if " rangeset" in line and "(earlier report)" not in line
        ),
        "summary": {k: summary[k] for k in ("total", "resolved", "resolved_rate", "not_resolved", "errors")},
    }  # fmt: skip
    print(json.dumps(result, indent=2))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    (HERE / "results" / f"review-instances-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
