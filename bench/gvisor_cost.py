"""What gVisor (`--runtime gvisor`) costs beside runc, in one run on the same inputs:

  1. one check, cold (a container started for it) and from a warm `fresh` pool (spaced like an
     agent loop: the pool has its replacement ready), p50 over N runs, the two runtimes
     interleaved so that load on the machine falls on both alike; two suites: the find_duplicates
     showcase as shipped (test time dominates) and its example tests alone (sandbox cost dominates);
  2. the 328-sample HumanEval batch (164 canonical solutions + one seeded mutant each, as
     bench/humaneval_speed.py builds it) through a `reuse` pool, and whether both runtimes give
     every sample the same verdict (the evidence ids differ by design: the runtime is in them).

    python bench/gvisor_cost.py [--runs 10] [--workers 2] [--timeout 5] [--only checks,batch]

Needs runsc registered with the engine (scripts/ensure-docker.sh). Writes
bench/results/gvisor-cost-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.humaneval_speed import sample_set, stats  # noqa: E402
from verifier import Evidence, Limits, Suite, Verifier, load_suite  # noqa: E402
from verifier.batch import verify_batch  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox import runtime as sandbox_runtime  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402
from verifier.sandbox.pool import WarmPool  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "find_duplicates"
RUNTIMES = ("runc", "gvisor")


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def split(rows: list[Evidence]) -> dict[str, float]:
    return {
        "sandbox": p50([e.durations.sandbox_s for e in rows]),
        "runner": p50([e.durations.runner_start_s for e in rows]),
        "tests": p50([e.durations.tests_s for e in rows]),
    }


def one_check(runs: int, suite: Suite) -> dict[str, Any]:
    """Cold and warm-pool checks of good.py under both runtimes, interleaved run by run."""
    good = EXAMPLE / "good.py"
    cold = {rt: Verifier(limits=Limits(runtime=rt)) for rt in RUNTIMES}  # type: ignore[arg-type]
    warm = {rt: Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=Limits(runtime=rt)) for rt in RUNTIMES}  # type: ignore[arg-type]
    times: dict[str, dict[str, list[float]]] = {rt: {"cold": [], "warm": []} for rt in RUNTIMES}
    evidence: dict[str, dict[str, list[Evidence]]] = {rt: {"cold": [], "warm": []} for rt in RUNTIMES}
    try:
        for _ in range(runs):
            for rt in RUNTIMES:
                for kind, verifier in (("cold", cold[rt]), ("warm", warm[rt])):
                    if kind == "warm":
                        pool = verifier.backend
                        assert isinstance(pool, WarmPool)
                        pool.warm_up()  # spaced: the replacement is ready, as between agent turns
                    t = time.monotonic()
                    ev = verifier.check(good, suite)
                    times[rt][kind].append(time.monotonic() - t)
                    evidence[rt][kind].append(ev)
                    assert ev.ok and ev.limits.runtime == rt, (rt, kind, ev.reason)
    finally:
        for v in (*cold.values(), *warm.values()):
            v.close()
    out: dict[str, Any] = {}
    for rt in RUNTIMES:
        out[rt] = {
            kind: {"p50_s": p50(times[rt][kind]), "split_p50_s": split(evidence[rt][kind])} for kind in times[rt]
        }
    out["ratio_gvisor_to_runc"] = {
        kind: round(out["gvisor"][kind]["p50_s"] / out["runc"][kind]["p50_s"], 2) for kind in ("cold", "warm")
    }
    return out


def batch(workers: int, timeout: float) -> dict[str, Any]:
    """The 328-sample set through a reuse pool under each runtime; verdict agreement."""
    problems = he.load_problems()
    samples = sample_set(problems)
    items = [he.Sample(s["task_id"], s["completion"], s) for s in samples]
    jobs, mapping = he.unique_jobs(items, problems)
    out: dict[str, Any] = {}
    verdicts: dict[str, list[tuple[bool, str]]] = {}
    for rt in RUNTIMES:
        limits = Limits(timeout_s=timeout + 10, call_timeout_s=timeout, runtime=rt)  # type: ignore[arg-type]
        t0 = time.monotonic()
        with Verifier.pooled(PoolConfig(policy="reuse", size=workers, preload=""), limits=limits) as verifier:
            pool = verifier.backend
            assert isinstance(pool, WarmPool)
            pool.warm_up()
            t_ready = time.monotonic()
            evidence = verify_batch(verifier, jobs, workers=workers, progress=False)
            wall = time.monotonic() - t_ready
        rows = [evidence[j] for j in mapping]
        verdicts[rt] = [(e.ok, e.status.value) for e in rows]
        out[rt] = {
            **stats([e.durations.total_s for e in rows], wall, len(samples)),
            "startup_s": round(t_ready - t0, 2),
            "passed": sum(e.ok for e in rows),
            "statuses": dict(sorted(Counter(status for _, status in verdicts[rt]).items())),
            "runtime_in_evidence": sorted({e.limits.runtime for e in rows}),
        }
        print(rt, json.dumps(out[rt]), file=sys.stderr, flush=True)
    same = [a == b for a, b in zip(verdicts["runc"], verdicts["gvisor"], strict=True)]
    out["agreement"] = sum(same) / len(samples)
    out["disagreements"] = [
        {"task_id": s["task_id"], "kind": s["kind"], "runc": verdicts["runc"][i], "gvisor": verdicts["gvisor"][i]}
        for i, s in enumerate(samples)
        if not same[i]
    ]
    out["ratio_gvisor_to_runc_wall"] = round(out["gvisor"]["wall_s"] / out["runc"]["wall_s"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--only", default="checks,batch")
    args = parser.parse_args()
    client = connect()
    sandbox_runtime.require(client.api, Limits(runtime="gvisor"))
    build(client)
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_avg_at_start": os.getloadavg(),
            "runsc": client.api.info().get("Runtimes", {}).get("runsc"),
        },
        "image": image_tag(),
        "runs": args.runs,
        "workers": args.workers,
        "timeout_s": args.timeout,
    }
    if "checks" in args.only:
        full = load_suite(EXAMPLE / "suite")
        examples_only = Suite(files={k: v for k, v in full.files.items() if k != "test_properties.py"}, name="examples")
        for name, suite in (("find_duplicates_examples_only", examples_only), ("find_duplicates_full", full)):
            report[name] = one_check(args.runs, suite)
            print(name, json.dumps(report[name]), file=sys.stderr, flush=True)
    if "batch" in args.only:
        report["humaneval_328_reuse"] = batch(args.workers, args.timeout)
    report["machine"]["load_avg_at_end"] = os.getloadavg()
    out = HERE / "results" / f"gvisor-cost-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "humaneval_328_reuse"}, indent=2))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
