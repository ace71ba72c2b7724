"""Latency of one verification: the bare sandbox round trip, `check` cold, and `check` from a
warm `fresh` pool, in one run, p50 over N runs each, split into queue / runner / tests.

Two suites: the find_duplicates showcase as shipped (16 tests, 4 Hypothesis properties at 200
examples: test time dominates) and its example tests alone (sandbox cost dominates).

    python bench/check_latency.py [--runs 20]

Writes bench/results/check-latency-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier import Limits, Suite, Verifier, load_suite  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox.backend import SandboxJob  # noqa: E402
from verifier.sandbox.docker_engine import DockerBackend, connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "find_duplicates"


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def sandbox_round_trip(runs: int) -> dict[str, Any]:
    """create, start, wait, remove of `true` in a locked-down container (DockerBackend)."""
    backend = DockerBackend()
    times = []
    for _ in range(runs):
        t = time.monotonic()
        backend.run(SandboxJob(image=image_tag(), command=["true"], limits=Limits()))
        times.append(time.monotonic() - t)
    return {"p50_s": p50(times), "min_s": round(min(times), 4), "max_s": round(max(times), 4)}


def checks(verifier: Verifier, candidate: Path, suite: Suite, runs: int) -> dict[str, Any]:
    rows = []
    for _ in range(runs):
        t = time.monotonic()
        ev = verifier.check(candidate, suite)
        rows.append((time.monotonic() - t, ev))
        assert ev.ok, ev.reason
    return {
        "p50_s": p50([r[0] for r in rows]),
        "split_p50_s": {
            "queue": p50([r[1].durations.queue_s for r in rows]),
            "sandbox": p50([r[1].durations.sandbox_s for r in rows]),
            "runner": p50([r[1].durations.runner_start_s for r in rows]),
            "tests": p50([r[1].durations.tests_s for r in rows]),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    build(connect())
    full = load_suite(EXAMPLE / "suite")
    examples_only = Suite(files={k: v for k, v in full.files.items() if k != "test_properties.py"}, name="examples")
    good = EXAMPLE / "good.py"
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "runs": args.runs,
        "sandbox_round_trip": sandbox_round_trip(args.runs),
    }
    for name, suite in (("find_duplicates_full", full), ("find_duplicates_examples_only", examples_only)):
        cold = checks(Verifier(), good, suite, args.runs)
        with Verifier.pooled(PoolConfig(policy="fresh", size=2)) as warm:
            warm.backend.warm_up()  # type: ignore[attr-defined]
            pooled = checks(warm, good, suite, args.runs)
            # A fresh pool replaces each used container in the background; back-to-back checks
            # may wait for it (queue). Spaced like an agent loop, they do not:
            spaced = []
            for _ in range(args.runs):
                warm.backend.warm_up()  # type: ignore[attr-defined]
                t = time.monotonic()
                warm.check(good, suite)
                spaced.append(time.monotonic() - t)
        report[name] = {
            "cold": cold,
            "fresh_pool_back_to_back": pooled,
            "fresh_pool_spaced_p50_s": p50(spaced),
            "ratio_spaced_to_cold": round(p50(spaced) / cold["p50_s"], 3),
        }
        print(name, json.dumps(report[name]), file=sys.stderr)
    out = HERE / "results" / f"check-latency-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
