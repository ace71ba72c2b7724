"""What one call into the candidate costs, as the tests pay it: a plain function call, a method
call on a candidate object (a handle), and a call among many asked for with `calls.each`,
measured end to end from the evidence's `tests_s` of runs that make N calls, minus a run that
makes none, on a warm `fresh` pool.

    python bench/call_cost.py [--calls 3000] [--runs 5] [--before DIR]

With --before DIR (a checkout of an earlier commit, e.g. `git worktree add DIR REV`), that
checkout's own script runs too, one run at a time between this checkout's runs (its image, its
runner), so both columns share the machine's drift; its columns are named `...-before`.

Writes bench/results/call-cost-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier import Candidate, Limits, Verifier  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402

CANDIDATE = """
def echo(x):
    return x

class Box:
    def echo(self, x):
        return x

def box():
    return Box()
"""
_SUITE = (
    "from solution import echo, box\n\ndef test_calls():\n    b = box()\n    for i in range({{n}}):\n        {body}\n"
)
SUITES = {
    "none": _SUITE.format(body="pass"),
    "plain": _SUITE.format(body="assert echo(i) == i"),
    "handle": _SUITE.format(body="assert b.echo(i) == i"),
    "each": (
        "from verifier_runner.calls import each\nfrom solution import echo\n\n"
        "def test_calls():\n    for i, answer in enumerate(each(echo, [(i,) for i in range({n})])):\n"
        "        assert answer == i\n"
    ),
}


def measure(calls: int, runs: int, names: list[str]) -> dict[str, list[float]]:
    """`runs` rounds of the suites `names`, interleaved, on one warm pool: each run's tests_s."""
    tests_s: dict[str, list[float]] = {name: [] for name in names}
    with (
        tempfile.TemporaryDirectory() as tmp,
        Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=Limits()) as v,
    ):
        suites = {}
        for name in names:
            folder = Path(tmp) / name
            folder.mkdir()
            (folder / "test_calls.py").write_text(SUITES[name].format(n=calls))
            (folder / "suite.toml").write_text('runner = "direct"\n')
            suites[name] = folder
        for _ in range(runs):
            for name, folder in suites.items():
                ev = v.check(Candidate.from_text(CANDIDATE), folder)
                assert ev.ok, (name, ev.reason)
                tests_s[name].append(ev.durations.tests_s)
    return tests_s


def before_run(checkout: Path, calls: int) -> dict[str, list[float]]:
    """One run of the before checkout's own script (its code, its image): its tests_s."""
    done = subprocess.run(
        [sys.executable, str(checkout / "bench" / "call_cost.py"), "--calls", str(calls), "--runs", "1"],
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
    )
    written = Path(done.stdout.strip().splitlines()[-1])
    tests_s: dict[str, list[float]] = json.loads(written.read_text())["tests_s"]
    written.unlink()
    return tests_s


def per_call_us(tests_s: dict[str, list[float]], calls: int) -> dict[str, float]:
    base = statistics.median(tests_s["none"])
    medians = {name: statistics.median(t) for name, t in tests_s.items() if name != "none"}
    return {name: round((median - base) / calls * 1e6, 1) for name, median in medians.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None, help="a checkout of an earlier commit")
    args = parser.parse_args()
    if args.before is None:
        tests_s = measure(args.calls, args.runs, list(SUITES))
        before: dict[str, list[float]] = {}
    else:
        tests_s = {name: [] for name in SUITES}
        before = {}
        for _ in range(args.runs):  # one run each at a time, interleaved
            for name, values in measure(args.calls, 1, list(SUITES)).items():
                tests_s[name] += values
            for name, values in before_run(args.before, args.calls).items():
                before.setdefault(name, []).extend(values)
    out = {
        "bench": "call-cost",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "calls": args.calls,
        "runs": args.runs,
        "load_1min_at_end": round(os.getloadavg()[0], 2),
        "tests_s": tests_s,
        "per_call_us": per_call_us(tests_s, args.calls),
        **({"before": str(args.before), "tests_s_before": before} if before else {}),
        **({"per_call_us_before": per_call_us(before, args.calls)} if before else {}),
    }
    print(json.dumps({k: v for k, v in out.items() if k.startswith("per_call")}), file=sys.stderr)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"call-cost-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
