"""Data tasks at the cost of plain ones (issue 37 §2): a warm-pool check of the dataframe example
(examples/dataframes: numpy + pandas declared, 4 tests) against the same task on plain Python
data with no packages (bench/environment_twin: the same 4 tests, the same example counts), in
one run, interleaved, end to end as a user runs it (`Verifier.check` on a `reuse` pool):

  - plain: the twin suite on the sandbox image;
  - packages, before: the dataframe suite with the environment's packages not preloaded (every
    test's candidate process and each job's trusted child import numpy and pandas themselves);
  - packages, after: the same with them preloaded (`protocol.data_preload`: the zygote and the
    trusted server import them once, before any fork).

And a pair of the same task checked on fixed examples, no Hypothesis (bench/data_examples: 4
tests, the same inputs, DataFrames and arrays against dicts and lists): the same work on both
sides but for the libraries, both preloaded as above (`examples_packages`, `examples_plain`).

Beside them, what the tasks themselves cost, so the sandbox's share of the gap shows:

  - plain pytest in the environment image (suite and candidate in one process, no runner, a
    container of the same image, its numpy/pandas; Hypothesis set as the runner sets it). The
    session is timed after pytest, Hypothesis and the case's packages are imported, as our
    pools import them before any job: pytest's own time for the 4 tests (collection included).
    The sandbox's share of a check is its wall time less that;
  - plain pytest on the host (the host's own numpy/pandas), whole process and pytest's time.

"before" is this code with `data_preload` answering "" (what every job asked for before), so
the three measures share one run, one machine load and one pool (its pools are keyed by image
and preload). The first check of each (which starts its containers) is not counted.

    python bench/data_preload.py [--runs 7] [--other-image TAG]

--other-image TAG adds columns in the same run, interleaved: the two pairs (preloaded) on a
sandbox image built from another checkout (`git worktree add DIR REV`, then `python -m verifier
image build` there, PYTHONPATH=DIR: it prints the tag), named `<case>@other`.

Writes bench/results/data-preload-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
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
    "examples_plain": (TWIN / "good.py", HERE / "data_examples" / "plain", True),
    "examples_packages": (EXAMPLE / "good.py", HERE / "data_examples" / "packages", True),
}
#: The cases whose suites import numpy and pandas (plain pytest in the image imports them first).
PACKAGED = ("packages_before", "packages_after", "examples_packages")
#: The cases timed with plain pytest in the environment image too.
IN_IMAGE_CASES = ("plain", "packages_after", "examples_plain", "examples_packages")
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


IN_IMAGE = (
    "import sys, time\n"
    "import pytest, hypothesis, hypothesis.strategies\n"
    "for name in sys.argv[1].split(','):\n"
    "    if name:\n"
    "        __import__(name); __import__('hypothesis.extra.' + name)\n"
    "started = time.monotonic()\n"
    "code = pytest.main(['-q', '-p', 'no:cacheprovider', '.'])\n"
    "print('SESSION', time.monotonic() - started)\n"
    "sys.exit(int(code))\n"
)


def plain_pytest_in_image(case: str, image_id: str) -> float:
    """pytest's time for the case's suite in a container of the environment image, its packages
    (numpy, pandas for the data suite) imported before the session, as our pools preload them."""
    candidate, suite, _ = CASES[case]
    with tempfile.TemporaryDirectory(prefix="data-preload-") as tmp:
        root = Path(tmp)
        shutil.copytree(suite, root / "suite")
        shutil.copy(candidate, root / "suite" / "solution.py")
        (root / "suite" / "suite.toml").unlink(missing_ok=True)
        (root / "suite" / "conftest.py").write_text(PLAIN_PROFILE.format(n=25))
        os.chmod(root, 0o755)
        preload = "numpy,pandas" if case in PACKAGED else ""
        cmd = ["docker", "run", "--rm", "--network", "none", "--cpus", "1", "--memory", "1g"]
        cmd += ["-v", f"{root / 'suite'}:/w:ro", "-w", "/w", "-e", "PYTHONPATH=/w", "-e", "PYTHONDONTWRITEBYTECODE=1"]
        cmd += ["-e", "OPENBLAS_NUM_THREADS=1", "-e", "TZ=UTC", "--entrypoint", "python3", image_id]
        cmd += ["-c", IN_IMAGE, preload]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = re.search(r"^SESSION ([0-9.]+)$", done.stdout, re.M)
    if done.returncode != 0 or found is None or "4 passed" not in done.stdout:
        raise SystemExit(f"plain pytest in the image on {case}: exit {done.returncode}: {done.stdout[-500:]}")
    return round(float(found.group(1)), 3)


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
    parser.add_argument("--other-image", default=None, help="a sandbox image built from another checkout")
    args = parser.parse_args()
    other_cases = IN_IMAGE_CASES if args.other_image else ()
    build(connect())
    load_before = os.getloadavg()
    rows: dict[str, list[float]] = {case: [] for case in (*CASES, *(f"{c}@other" for c in other_cases))}
    split: dict[str, list[dict[str, float]]] = {case: [] for case in rows}
    config = PoolConfig(policy="reuse", size=1, max_uses=1000)
    host: dict[str, dict[str, list[float]]] = {c: {"wall_s": [], "tests_s": []} for c in ("plain", "packages_after")}
    in_image: dict[str, list[float]] = {c: [] for c in IN_IMAGE_CASES}
    env_image = ""
    with contextlib.ExitStack() as stack:
        verifier = stack.enter_context(Verifier.pooled(config, image=image_tag(), limits=LIMITS))
        other = (
            stack.enter_context(Verifier.pooled(config, image=args.other_image, limits=LIMITS)) if other_cases else None
        )
        for case in CASES:
            _, first = timed(verifier, case)  # starts that pool's container; not counted
            if first.environment is not None:
                env_image = first.environment.image_id
        for case in other_cases:
            assert other is not None
            timed(other, case)
        for _ in range(args.runs):
            for case in CASES:
                total, evidence = timed(verifier, case)
                rows[case].append(round(total, 3))
                split[case].append(parts(evidence))
            for case in other_cases:
                assert other is not None
                total, evidence = timed(other, case)
                rows[f"{case}@other"].append(round(total, 3))
                split[f"{case}@other"].append(parts(evidence))
            for case in ("plain", "packages_after"):
                wall, tests = plain_pytest(case)
                host[case]["wall_s"].append(wall)
                host[case]["tests_s"].append(tests)
            for case in IN_IMAGE_CASES:
                in_image[case].append(plain_pytest_in_image(case, env_image))
    p50 = {case: round(statistics.median(values), 3) for case, values in rows.items()}
    host_p50 = {case: {k: round(statistics.median(v), 3) for k, v in host[case].items()} for case in host}
    charged = {case: round(statistics.median(p["charged_tests_s"] for p in split[case]), 3) for case in rows}
    task = {case: round(statistics.median(v), 3) for case, v in in_image.items()}
    # The sandbox's share: a check's wall time less what plain pytest takes for the same tests in
    # the same image with the same packages imported before it (the task's own cost).
    share = {
        "plain": round(p50["plain"] - task["plain"], 3),
        "packages": round(p50["packages_after"] - task["packages_after"], 3),
        "examples_plain": round(p50["examples_plain"] - task["examples_plain"], 3),
        "examples_packages": round(p50["examples_packages"] - task["examples_packages"], 3),
    }
    result: dict[str, Any] = {
        "what": "warm reuse-pool check of the dataframe example (numpy + pandas) with the environment's "
        "packages preloaded (after) and not (before), beside the same task on plain data; interleaved, one run",
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "load_before": load_before},
        "runs": args.runs,
        "pool": config.model_dump(),
        "check_s_p50": p50,
        "charged_tests_s_p50": charged,
        "other_image": args.other_image,
        "ratio_to_plain": {case: round(p50[case] / p50["plain"], 2) for case in CASES},
        **(
            {
                "ratio_to_plain_other": round(p50["packages_after@other"] / p50["plain@other"], 2),
                "examples_ratio_other": round(p50["examples_packages@other"] / p50["examples_plain@other"], 2),
            }
            if other_cases
            else {}
        ),
        "examples_ratio": round(p50["examples_packages"] / p50["examples_plain"], 2),
        "plain_pytest_in_image_p50": task,
        "task_ratio_in_image": round(task["packages_after"] / task["plain"], 2),
        "examples_task_ratio_in_image": round(task["examples_packages"] / task["examples_plain"], 2),
        "sandbox_share_s_p50": share,
        "sandbox_share_ratio": round(share["packages"] / share["plain"], 2),
        "plain_pytest_in_image": in_image,
        "plain_pytest_on_host_p50": {"plain": host_p50["plain"], "packages": host_p50["packages_after"]},
        "plain_pytest_on_host": host,
        "check_s": rows,
        "parts": split,
        "load_after": os.getloadavg(),
    }
    out = HERE / "results" / f"data-preload-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    shown = (
        "host",
        "check_s_p50",
        "charged_tests_s_p50",
        "ratio_to_plain",
        "examples_ratio",
        "other_image",
        "plain_pytest_in_image_p50",
        "task_ratio_in_image",
        "examples_task_ratio_in_image",
        "sandbox_share_s_p50",
        "sandbox_share_ratio",
        "plain_pytest_on_host_p50",
    )
    print(json.dumps({k: result[k] for k in (*shown, "ratio_to_plain_other", "examples_ratio_other") if k in result}))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
