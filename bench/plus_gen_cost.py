"""What making the plus inputs costs (issue 37 §3): every HumanEval problem's inputs made in this
process, one after another, as one generator worker makes its share (`plus_worker.answer`,
100 inputs a problem), timed in CPU seconds (so another process on the machine does not change
the figure much); with --before DIR, the same through another checkout's generator, in the same
run.

    python bench/plus_gen_cost.py [--count 100] [--before DIR]

Writes bench/results/plus-gen-cost-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import result_file  # noqa: E402

#: Run in a child interpreter with `checkout` first on the path (this checkout's editable
#: install, a finder on sys.meta_path, left out): its generator, the same problems.
MEASURE = """
import json, sys, time
checkout, count = sys.argv[1], int(sys.argv[2])
sys.meta_path[:] = [m for m in sys.meta_path if "editable" not in repr(m)]
sys.path.insert(0, checkout)
from verifier.bench import humaneval as he, plus
from verifier.bench import plus_gen
from verifier.bench.plus_worker import CpuTimer, answer
assert plus_gen.__file__.startswith(checkout), plus_gen.__file__
problems = he.load_problems()
requests = [plus._request(problems[t], count) for t in problems if plus.can_plus(problems[t])]
timer, started = CpuTimer(), time.process_time()
made = [answer(timer, r) for r in requests]
print(json.dumps({
    "generator_version": plus.GENERATOR_VERSION,
    "cpu_s": round(time.process_time() - started, 2),
    "problems": len(made),
    "inputs_kept": sum(len(m["inputs"]) for m in made),
    "tried": sum(m["tried"] for m in made),
}))
"""


def measure(checkout: Path, count: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(checkout), str(count)], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--before", type=Path, default=None, help="a checkout of an earlier commit")
    args = parser.parse_args()
    out: dict[str, object] = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "count": args.count}
    out["now"] = measure(HERE.parent, args.count)
    if args.before is not None:
        out["before"] = {"checkout": str(args.before), **measure(args.before.resolve(), args.count)}
    result_file.write("plus-gen-cost", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
