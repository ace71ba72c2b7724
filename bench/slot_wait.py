"""Is the wait for a machine-wide slot ever charged? (issue 37 §4)

For each run policy (reuse, fresh, cold) it checks an infinite loop (call limit 1 s, run limit
1 s) while another process holds the machine's only slot (`VERIFIER_MAX_SANDBOXES=1`, a private
`VERIFIER_SLOTS_DIR`) for `--hold` seconds, far past the runner's 4x backstop. What must hold: the
loop is the candidate's `timeout` (never `overloaded`), and `queue_s` is the hold.

    python bench/slot_wait.py [--hold 10]

Writes bench/results/slot-wait-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HOLD = """
import sys, time
from pathlib import Path
from verifier.sandbox.admission import Admission
with Admission(1, folder=Path(sys.argv[1])).slot():
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold", type=float, default=10.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="slot-wait-"))
    slots = work / "slots"
    slots.mkdir()
    os.environ |= {"VERIFIER_SLOTS_DIR": str(slots), "VERIFIER_MAX_SANDBOXES": "1", "VERIFIER_IMAGE_PRUNE": "0"}
    from verifier import Limits, Verifier
    from verifier.limits import PoolConfig

    suite = work / "suite"
    suite.mkdir()
    (suite / "test_loop.py").write_text("from solution import f\n\ndef test_f():\n    assert f() == 1\n")
    rows = []
    for policy in ("reuse", "fresh", "cold"):
        pool = PoolConfig(policy="reuse" if policy == "cold" else policy, size=1, preload="")
        with Verifier.with_policy(policy, pool, limits=Limits(timeout_s=1, call_timeout_s=1)) as v:
            v.check("def f():\n    return 1\n", suite)  # the pool warm, the image found
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLD, str(slots), str(args.hold)], stdout=subprocess.PIPE, text=True
            )
            assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
            ev = v.check("def f():\n    while True:\n        pass\n", suite)
            holder.wait()
        row = {"policy": policy, "status": ev.status.value, "reason": ev.reason, **ev.durations.model_dump()}
        print(json.dumps(row))
        rows.append(row)
    out = HERE / "results" / f"slot-wait-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps({"hold_s": args.hold, "load": os.getloadavg(), "runs": rows}, indent=2) + "\n")
    print(out)


if __name__ == "__main__":
    main()
