"""Data tasks at the cost of plain ones (issue 37 §2): a warm-pool check of the dataframe example
(examples/dataframes: numpy + pandas declared, 4 tests) against the same task on plain Python
data with no packages (bench/environment_twin: the same 4 tests, the same example counts), in
one run, interleaved, end to end as a user runs it (`Verifier.check` on a `reuse` pool):

  - plain: the twin suite on the sandbox image;
  - packages, before: the dataframe suite with the environment's packages not preloaded (every
    test's candidate process and each job's trusted child import numpy and pandas themselves);
  - packages, after: the same with them preloaded (`protocol.data_preload`: the zygote and the
    trusted server import them once, before any fork).

Beside them, the same two suites with plain pytest on the host (suite and candidate in one
process, unsandboxed, Hypothesis set as the runner sets it; the host's own numpy/pandas): what
the tasks themselves cost, so the sandbox's share of the gap shows.

"before" is this code with `data_preload` answering "" (what every job asked for before), so
the three measures share one run, one machine load and one pool (its pools are keyed by image
and preload). The first check of each (which starts its containers) is not counted.

    python bench/data_preload.py [--runs 7]

Writes bench/results/data-preload-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import verifier.verify as verify_module  # noqa: E402
from verifier import Evidence, Limits, PoolConfig, Verifier  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "dataframes"
TWIN = HERE / "environment_twin"
CASES = {
    "plain": (TWIN / "good.py", TWIN / "suite", True),
    "packages_before": (EXAMPLE / "good.py", EXAMPLE / "suite", False),
    "packages_after": (EXAMPLE / "good.py", EXAMPLE / "suite", True),
}
LIMITS = Limits(timeout_s=300)
_PRELOAD = verify_module.data_preload


def timed(verifier: Verifier, case: str) -> tuple[float, Evidence]:
    candidate, suite, preload = CASES[case]
    verify_module.data_preload = _PRELOAD if preload else (lambda _modules, _kind: "")  # type: ignore[assignment]
    started = time.monotonic()
    evidence = verifier.check(candidate, suite)
    elapsed = time.monotonic() - started
    if not evidence.ok:
        raise SystemExit(f"{case}: {evidence.status.value}: {evidence.reason}")
    return elapsed, evidence


PLAIN_PROFILE = (
    "from hypothesis import settings\n"
    "settings.register_profile('v', max_examples={n}, derandomize=True, deadline=None, database=None)\n"
    "settings.load_profile('v')\n"
)


def plain_pytest(case: str) -> tuple[float, float]:
    """(whole process wall, pytest's own test time) of the case's suite with plain pytest on the host."""
    candidate, suite, _ = CASES[case]
    with tempfile.TemporaryDirectory(prefix="data-preload-") as tmp:
        root = Path(tmp)
        shutil.copytree(suite, root / "suite")
        shutil.copy(candidate, root / "solution.py")
        (root / "suite" / "conftest.py").write_text(PLAIN_PROFILE.format(n=25))
        env = {**os.environ, "PYTHONPATH": str(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "TZ": "UTC"}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "."]
        started = time.monotonic()
        done = subprocess.run(cmd, cwd=root / "suite", env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
    found = re.search(r"4 passed in ([0-9.]+)s", done.stdout)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"plain pytest on {case}: exit {done.returncode}: {done.stdout[-500:]}")
    return round(wall, 3), float(found.group(1))


def parts(evidence: Evidence) -> dict[str, float]:
    d = evidence.durations
    return {
        "tests_s": round(d.tests_s, 3),
        "runner_start_s": round(d.runner_start_s, 3),
        "queue_s": round(d.queue_s, 3),
        "host_wait_s": round(d.host_wait_s, 3),
        "charged_tests_s": round(d.tests_s - d.host_wait_s, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    build(connect())
    load_before = os.getloadavg()
    rows: dict[str, list[float]] = {case: [] for case in CASES}
    split: dict[str, list[dict[str, float]]] = {case: [] for case in CASES}
    config = PoolConfig(policy="reuse", size=1, max_uses=1000)
    host: dict[str, dict[str, list[float]]] = {c: {"wall_s": [], "tests_s": []} for c in ("plain", "packages_after")}
    with Verifier.pooled(config, image=image_tag(), limits=LIMITS) as verifier:
        for case in CASES:
            timed(verifier, case)  # starts that pool's container; not counted
        for _ in range(args.runs):
            for case in CASES:
                total, evidence = timed(verifier, case)
                rows[case].append(round(total, 3))
                split[case].append(parts(evidence))
            for case in ("plain", "packages_after"):
                wall, tests = plain_pytest(case)
                host[case]["wall_s"].append(wall)
                host[case]["tests_s"].append(tests)
    p50 = {case: round(statistics.median(values), 3) for case, values in rows.items()}
    host_p50 = {case: {k: round(statistics.median(v), 3) for k, v in host[case].items()} for case in host}
    charged = {case: round(statistics.median(p["charged_tests_s"] for p in split[case]), 3) for case in CASES}
    result: dict[str, Any] = {
        "what": "warm reuse-pool check of the dataframe example (numpy + pandas) with the environment's "
        "packages preloaded (after) and not (before), beside the same task on plain data; interleaved, one run",
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "load_before": load_before},
        "runs": args.runs,
        "pool": config.model_dump(),
        "check_s_p50": p50,
        "charged_tests_s_p50": charged,
        "ratio_to_plain": {case: round(p50[case] / p50["plain"], 2) for case in CASES},
        "plain_pytest_on_host_p50": {"plain": host_p50["plain"], "packages": host_p50["packages_after"]},
        "plain_pytest_on_host": host,
        "check_s": rows,
        "parts": split,
        "load_after": os.getloadavg(),
    }
    out = HERE / "results" / f"data-preload-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    shown = ("host", "check_s_p50", "charged_tests_s_p50", "ratio_to_plain", "plain_pytest_on_host_p50")
    print(json.dumps({k: result[k] for k in shown}))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
