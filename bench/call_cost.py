"""What one call into the candidate costs, as the tests pay it: a plain function call against a
method call on a candidate object (a handle), measured end to end from the evidence's
`tests_s` of runs that make N calls, minus a run that makes none, on a warm `fresh` pool.

    python bench/call_cost.py [--calls 3000] [--runs 5]

Writes bench/results/call-cost-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
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
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tests_s: dict[str, list[float]] = {name: [] for name in SUITES}
    with (
        tempfile.TemporaryDirectory() as tmp,
        Verifier.pooled(PoolConfig(policy="fresh", size=1), limits=Limits()) as v,
    ):
        suites = {}
        for name, text in SUITES.items():
            folder = Path(tmp) / name
            folder.mkdir()
            (folder / "test_calls.py").write_text(text.format(n=args.calls))
            (folder / "suite.toml").write_text('runner = "direct"\n')
            suites[name] = folder
        for _ in range(args.runs):
            for name, folder in suites.items():
                ev = v.check(Candidate.from_text(CANDIDATE), folder)
                assert ev.ok, (name, ev.reason)
                tests_s[name].append(ev.durations.tests_s)
    base = statistics.median(tests_s["none"])
    per_call_us = {
        name: round((statistics.median(tests_s[name]) - base) / args.calls * 1e6, 1) for name in ("plain", "handle")
    }
    out = {
        "bench": "call-cost",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "calls": args.calls,
        "runs": args.runs,
        "tests_s": tests_s,
        "per_call_us": per_call_us,
    }
    print(json.dumps(per_call_us), file=sys.stderr)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"call-cost-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
