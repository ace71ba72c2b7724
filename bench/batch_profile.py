"""Where a HumanEval sample's time and CPU go on the batch path, in process: `verify_batch` over
the 328 set (bench/humaneval_speed.py's) on a warm `reuse` pool, as `verifier bench humaneval`
builds it, timed once the pool is warm.

Reports the batch's wall time, CPU per sample of all sandbox containers (their cgroup, user and
system) and of this host process, the evidence's durations (p50: total, queue, runner, tests)
and the pool's container starts. Run it on a quiet machine; the containers' cgroup counts every
container of the engine.

    python bench/batch_profile.py [--workers 2] [--repeat 3]

Writes bench/results/batch-profile-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.humaneval_speed import sample_set  # noqa: E402
from verifier import Limits, Verifier  # noqa: E402
from verifier.batch import verify_batch  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.bench.harness import BENCH_MAX_USES  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox.pool import WarmPool  # noqa: E402

CGROUPS = ("/sys/fs/cgroup/unified/docker/cpu.stat", "/sys/fs/cgroup/docker/cpu.stat")


def containers_cpu_s() -> tuple[float, float]:
    """(user, system) CPU seconds of every container so far (cgroup v2 or the v1 hybrid's unified)."""
    for path in CGROUPS:
        try:
            with open(path) as fh:
                stat = dict(line.split()[:2] for line in fh)
            return int(stat["user_usec"]) / 1e6, int(stat["system_usec"]) / 1e6
        except (OSError, KeyError):
            continue
    raise SystemExit("no cgroup cpu.stat for the engine's containers")


def one_run(jobs: list[Any], workers: int) -> dict[str, Any]:
    limits = Limits(timeout_s=15, call_timeout_s=5)
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=workers, preload="", max_uses=BENCH_MAX_USES), limits=limits
    ) as v:
        pool = v.backend
        assert isinstance(pool, WarmPool)
        pool.warm_up()
        cpu0, host0, wall0 = containers_cpu_s(), time.process_time(), time.monotonic()
        evidence = verify_batch(v, jobs, workers=workers, progress=False)
        wall, host1, cpu1 = time.monotonic() - wall0, time.process_time(), containers_cpu_s()
        started = pool.stats.started
    n = len(jobs)

    def p50_ms(field: str) -> float:
        return round(statistics.median(getattr(e.durations, field) for e in evidence) * 1000, 2)

    return {
        "batch_wall_s": round(wall, 3),
        "wall_per_sample_ms": round(wall / n * 1000, 2),
        "container_user_ms_per_sample": round((cpu1[0] - cpu0[0]) / n * 1000, 2),
        "container_system_ms_per_sample": round((cpu1[1] - cpu0[1]) / n * 1000, 2),
        "host_ms_per_sample": round((host1 - host0) / n * 1000, 2),
        "p50_ms": {f: p50_ms(f) for f in ("total_s", "queue_s", "runner_start_s", "tests_s")},
        "containers_started": started,
        "statuses": {s: sum(e.status.value == s for e in evidence) for s in {e.status.value for e in evidence}},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    problems = he.load_problems()
    samples = [he.Sample(line=s, task_id=s["task_id"], completion=s["completion"]) for s in sample_set(problems)]
    jobs, _ = he.unique_jobs(samples, problems)
    runs = [one_run(jobs, args.workers) for _ in range(args.repeat)]
    for run in runs:
        print(json.dumps(run), file=sys.stderr)
    out = {
        "bench": "batch-profile",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "load_before": os.getloadavg()},
        "samples": len(jobs),
        "workers": args.workers,
        "runs": runs,
    }
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"batch-profile-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
