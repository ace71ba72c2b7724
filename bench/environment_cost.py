"""What a suite's packages cost (issue 24): the dataframe example (examples/dataframes, numpy +
pandas declared in suite.toml) beside the same task on plain Python data with no packages
(bench/environment_twin), in one run on the same machine:

  1. the first check with a cold environment: the environment image removed, so the check
     resolves the requirements on the host (pip download, wheels only), builds the image and
     runs; beside it the first (cold-container) check of the plain suite;
  2. a check with the environment cached (a new Verifier each time, so each one looks the image
     up again, and a new container per check), p50 over N, interleaved with the plain suite's;
  3. a warm-pool check (`fresh` pool of size 1, checks 15 s apart so the replacement is ready), p50 over N,
     interleaved likewise.

    python bench/environment_cost.py [--runs 5]

Removes (and rebuilds) only the example's environment image. Writes
bench/results/environment-cost-<timestamp>.json. Not part of the test suite.
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

from verifier import Evidence, Limits, PoolConfig, Verifier, load_suite  # noqa: E402
from verifier.sandbox.container import remove_image  # noqa: E402
from verifier.sandbox.docker_engine import DockerBackend, connect  # noqa: E402
from verifier.sandbox.environment import ensure, env_tag, find, spec_digest  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "dataframes"
TWIN = HERE / "environment_twin"
CASES = {"packages": (EXAMPLE / "good.py", EXAMPLE / "suite"), "plain": (TWIN / "good.py", TWIN / "suite")}
LIMITS = Limits(timeout_s=300)
#: Between two warm-pool checks: time for the pool's replacement container to start and import.
SPACING_S = 15.0


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def parts(evidence: Evidence) -> dict[str, float]:
    """Where a check's time went (evidence.durations): tests, runner start, CPU waits not charged."""
    d = evidence.durations
    return {
        "tests_s": round(d.tests_s, 3),
        "runner_start_s": round(d.runner_start_s, 3),
        "queue_s": round(d.queue_s, 3),
        "host_wait_s": round(d.host_wait_s, 3),
    }


def timed(verifier: Verifier, case: str) -> tuple[float, Evidence]:
    candidate, suite = CASES[case]
    started = time.monotonic()
    evidence = verifier.check(candidate, suite)
    elapsed = time.monotonic() - started
    if not evidence.ok:
        raise SystemExit(f"{case}: {evidence.status.value}: {evidence.reason}")
    return elapsed, evidence


def cold_environment(image: str) -> dict[str, Any]:
    """The first check of each suite; the example's environment image removed beforehand."""
    spec = load_suite(CASES["packages"][1]).requirements
    client = connect()
    base_id = str(client.api.inspect_image(image)["Id"])
    digest = spec_digest(spec, base_id)
    if find(client, digest) is not None and not remove_image(client.api, env_tag(digest)):
        raise SystemExit("the example's environment image is in use: stop what uses it first")
    out: dict[str, Any] = {}
    for case in ("plain", "packages"):
        with Verifier(image=image, limits=LIMITS) as verifier:
            total, evidence = timed(verifier, case)
        out[case] = {"check_s": round(total, 3), **parts(evidence)}
    with DockerBackend() as backend:
        env = ensure(backend, spec, image)
    out["packages"]["built_packages"] = list(env.packages)
    return out


def cached(image: str, runs: int) -> dict[str, Any]:
    rows: dict[str, list[float]] = {"plain": [], "packages": []}
    split: dict[str, list[dict[str, float]]] = {"plain": [], "packages": []}
    for _ in range(runs):
        for case in rows:
            with Verifier(image=image, limits=LIMITS) as verifier:
                total, evidence = timed(verifier, case)
            rows[case].append(total)
            split[case].append(parts(evidence))
    return {case: {"check_s_p50": p50(rows[case]), "runs": rows[case], "parts": split[case]} for case in rows}


def warm_pool(image: str, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in ("plain", "packages"):
        with Verifier.pooled(PoolConfig(policy="fresh", size=1), image=image, limits=LIMITS) as verifier:
            timed(verifier, case)  # the first one starts the pool of its image
            samples: list[float] = []
            split: list[dict[str, float]] = []
            for _ in range(runs):
                time.sleep(SPACING_S)  # the replacement container is ready, as in an agent loop
                total, evidence = timed(verifier, case)
                samples.append(total)
                split.append(parts(evidence))
        out[case] = {"check_s_p50": p50(samples), "runs": samples, "parts": split}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    build(connect())
    image = image_tag()
    result = {
        "what": "first check with a cold environment, a check with it cached, a warm-pool check; "
        "the dataframe example (numpy + pandas) beside the same task on plain data",
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "load": os.getloadavg()},
        "runs": args.runs,
        "cold_environment": cold_environment(image),
        "cached_environment": cached(image, args.runs),
        "warm_pool": warm_pool(image, args.runs),
        "load_after": os.getloadavg(),
    }
    out = HERE / "results" / f"environment-cost-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
