"""How much stronger `bench humaneval --plus` makes HumanEval's tests (issue 25, section 2), CLI
end to end, and what it costs.

Samples: HumanEval's 164 canonical solutions, one seeded mutant of each (`bench/mutants.py`), and
the independent correct solutions of `bench/plus_correct.jsonl` (written for this measurement,
each with another algorithm than the canonical solution's; every one passes the base tests).
Three runs, each a whole process with a fresh evidence store:

    base        verifier bench humaneval SAMPLES --workers 2 --timeout 5
    plus-cold   ... --plus, with an empty cache (XDG_CACHE_HOME a new folder): the plus inputs
                are made in this run
    plus-warm   ... --plus, with that cache: the inputs found there, as in every later run

Our sandboxes take their slots from a folder of their own (`VERIFIER_SLOTS_DIR`), so they do not
queue behind other processes' verifications on a shared machine. Reported: the mutants each of
base and base+plus rejects (and the ones both let through, with
their mutation), the canonical solutions that pass both, the correct solutions that plus
rejects (false rejections, each with its failing input), the wall times, and the plus inputs.

    python bench/plus_strength.py [--workers 2] [--plus-inputs 100] [--before DIR]

With --before DIR (a checkout of an earlier commit, e.g. `git worktree add DIR REV`), two more
runs through that checkout's CLI, with a cache of their own: plus-cold-before (an empty cache)
and plus-warm-before (that cache): the cost and the strength of a change and of its baseline in
one run, on one machine load.

Writes bench/results/plus-strength-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.batch_speed import VERIFIER  # noqa: E402
from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402

CORRECT = HERE / "plus_correct.jsonl"
TIMEOUT = 5.0


def samples() -> list[dict[str, Any]]:
    made = sample_set(he.load_problems())
    for line in CORRECT.read_text().splitlines():
        row = json.loads(line)
        made.append({"task_id": row["task_id"], "completion": row["completion"], "kind": "correct"})
    return made


#: The CLI of another checkout, run by this interpreter: its folder first, this checkout's
#: editable install (a finder on sys.meta_path, which a path alone would not pass) left out. The
#: processes it starts with `sys.executable -m ...` (the plus inputs' generator) get the same: an
#: interpreter of that checkout (`before_python`), else they would run this checkout's code.
BEFORE_CLI = (
    "import sys; sys.meta_path[:] = [m for m in sys.meta_path if 'editable' not in repr(m)]; "
    "sys.executable = sys.argv.pop(1); "
    "sys.path.insert(0, sys.argv.pop(1)); from verifier.cli import main; sys.argv[0] = 'verifier'; main()"
)
BEFORE_PYTHON = """#!{python}
import runpy, sys
sys.meta_path[:] = [m for m in sys.meta_path if "editable" not in repr(m)]
sys.path.insert(0, {checkout!r})
assert sys.argv[1] == "-m", sys.argv
sys.argv = [sys.argv[2], *sys.argv[3:]]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def before_python(tmp: Path, checkout: Path) -> Path:
    """An interpreter that runs `-m MODULE` from `checkout` (a script: this interpreter, then it)."""
    path = tmp / "before-python"
    path.write_text(BEFORE_PYTHON.format(python=sys.executable, checkout=str(checkout)))
    path.chmod(0o755)
    return path


def run(
    name: str,
    rows: list[dict[str, Any]],
    tmp: Path,
    extra: list[str],
    env: dict[str, str],
    checkout: Path | None = None,
) -> dict[str, Any]:
    """One whole CLI process on a samples file of its own (so nothing is served from a store);
    `extra` holds --workers and the run's own options; `checkout`: another checkout's CLI."""
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = tmp / f"{name}.summary.json"
    if checkout is None:
        cli = [VERIFIER]
    else:
        cli = [sys.executable, "-c", BEFORE_CLI, str(before_python(tmp, checkout)), str(checkout)]
    command = [*cli, "bench", "humaneval", str(path), "--timeout", str(TIMEOUT)]
    command += ["--k", "1", "--json-out", str(summary), *extra]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ, **env})
    wall = round(time.monotonic() - started, 2)
    if done.returncode not in (0, 2) or not summary.exists():
        raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr[-3000:]}")
    results = [json.loads(line) for line in Path(f"{path}_results.jsonl").read_text().splitlines()]
    return {"wall_s": wall, "summary": json.loads(summary.read_text()), "results": results, "stderr": done.stderr}


def strength(rows: list[dict[str, Any]], base: list[dict[str, Any]], plus: list[dict[str, Any]]) -> dict[str, Any]:
    def count(kind: str, key: str, results: list[dict[str, Any]], want: bool) -> int:
        return sum(r["kind"] == kind and res[key] is want for r, res in zip(rows, results, strict=True))

    mutants = sum(r["kind"] == "mutant" for r in rows)
    correct = [(r, b, p) for r, b, p in zip(rows, base, plus, strict=True) if r["kind"] == "correct"]
    return {
        "mutants": mutants,
        "mutants_rejected_base": count("mutant", "passed", base, False),
        "mutants_rejected_base_plus": count("mutant", "plus_passed", plus, False),
        "mutants_rejected_by_plus_only": [
            r["task_id"]
            for r, b, p in zip(rows, base, plus, strict=True)
            if r["kind"] == "mutant" and b["passed"] and not p["plus_passed"]
        ],
        "mutants_passing_both": [
            {"task_id": r["task_id"], "rule": r.get("rule")}
            for r, p in zip(rows, plus, strict=True)
            if r["kind"] == "mutant" and p["plus_passed"]
        ],
        "canonical_passing_base": count("canonical", "passed", base, True),
        "canonical_passing_base_plus": count("canonical", "plus_passed", plus, True),
        "correct_solutions": len(correct),
        "correct_rejected_base": [r["task_id"] for r, b, _ in correct if not b["passed"]],
        "correct_rejected_plus": [
            {"task_id": r["task_id"], "status": p["plus_status"], "failures": p.get("plus_failures")}
            for r, _, p in correct
            if not p["plus_passed"]
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plus-inputs", type=int, default=100)
    parser.add_argument("--before", type=Path, default=None, help="a checkout of an earlier commit")
    args = parser.parse_args()
    rows = samples()
    with tempfile.TemporaryDirectory(prefix="plus-strength-") as folder:
        tmp = Path(folder)
        os.environ["VERIFIER_SLOTS_DIR"] = str(tmp / "slots")
        cache = {"XDG_CACHE_HOME": str(tmp / "cache")}
        workers = ["--workers", str(args.workers)]
        plus = [*workers, "--plus", "--plus-inputs", str(args.plus_inputs), "--details"]
        base = run("base", rows, tmp, workers, {})
        cold = run("plus-cold", rows, tmp, plus, cache)
        warm = run("plus-warm", rows, tmp, plus, cache)
        before = cold_before = None
        if args.before:
            own = {"XDG_CACHE_HOME": str(tmp / "cache-before")}
            cold_before = run("plus-cold-before", rows, tmp, plus, own, args.before)
            before = run("plus-warm-before", rows, tmp, plus, own, args.before)
    agree = all(b["passed"] == w["passed"] for b, w in zip(base["results"], warm["results"], strict=True))
    same_plus = all(c["plus_passed"] == w["plus_passed"] for c, w in zip(cold["results"], warm["results"], strict=True))
    out = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "samples": len(rows),
        "kinds": {k: sum(r["kind"] == k for r in rows) for k in ("canonical", "mutant", "correct")},
        "plus_inputs_asked": args.plus_inputs,
        "workers": args.workers,
        "timeout_s": TIMEOUT,
        "strength": strength(rows, base["results"], warm["results"]),
        "base_verdicts_equal_in_plus_runs": agree,
        "plus_verdicts_equal_cold_and_warm": same_plus,
        "wall_s": {
            "base": base["wall_s"],
            "plus-cold": cold["wall_s"],
            "plus-warm": warm["wall_s"],
            **({"plus-cold-before": cold_before["wall_s"]} if cold_before else {}),
            **({"plus-warm-before": before["wall_s"]} if before else {}),
        },
        "before": str(args.before) if args.before else None,
        "strength_before": strength(rows, base["results"], before["results"]) if before else None,
        "plus_inputs_before": before["summary"]["plus"]["inputs"] if before else None,
        "plus_verdicts_equal_before": (
            all(b["plus_passed"] == w["plus_passed"] for b, w in zip(before["results"], warm["results"], strict=True))
            if before
            else None
        ),
        "load_1min_at_end": round(os.getloadavg()[0], 2),
        "pass@1": warm["summary"]["base_vs_plus"]["pass@1"],
        "plus_inputs": warm["summary"]["plus"]["inputs"],
        "plus_summary_cold": {k: v for k, v in cold["summary"]["plus"].items() if k != "inputs"},
        "plus_summary_warm": {k: v for k, v in warm["summary"]["plus"].items() if k != "inputs"},
        "cold_stderr_tail": cold["stderr"][-1500:],
    }
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    target = results / f"plus-strength-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    target.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("strength", "wall_s", "pass@1")}, indent=2))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
