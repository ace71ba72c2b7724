"""Overload: many simultaneous `verifier check` of a correct candidate, through the CLI.

For each wave size (4x, 10x and 20x as many checks as the machine has cores) it starts that many
`verifier check good.py --suite ... --json` processes at once and records each one's exit code,
status, and its time split (waiting for an admission slot, waiting for a CPU, tests). What must
hold: every check passes or says the host was too busy (`overloaded`, exit 3); none is a
`timeout` or another verdict against the correct candidate. In the same run, one check alone is
the reference for the per-check time.

    python bench/load.py [--factors 4,10,20] [--candidate PATH] [--suite DIR]

Writes bench/results/load-<timestamp>.json. Not part of the test suite (it takes minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The command under test: on PATH, or beside this interpreter (a venv that is not activated).
VERIFIER = shutil.which("verifier") or str(Path(sys.executable).with_name("verifier"))
EXAMPLE = HERE.parent / "examples" / "find_duplicates"


def one(candidate: Path, suite: Path) -> dict[str, Any]:
    verifier = VERIFIER
    started = time.monotonic()
    done = subprocess.run(
        [verifier, "check", str(candidate), "--suite", str(suite), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    row: dict[str, Any] = {"exit_code": done.returncode, "wall_s": round(wall, 3)}
    try:
        ev = json.loads(done.stdout)
        d = ev["durations"]
        row.update(
            status=ev["status"],
            fault=ev["fault"],
            queue_s=round(d["queue_s"], 3),
            host_wait_s=round(d["host_wait_s"], 3),
            tests_s=round(d["tests_s"], 3),
        )
    except (ValueError, KeyError):
        row.update(status="no-evidence", stderr=done.stderr[-500:])
    return row


def wave(n: int, candidate: Path, suite: Path) -> dict[str, Any]:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=n) as pool:
        rows = list(pool.map(lambda _: one(candidate, suite), range(n)))
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    walls = sorted(r["wall_s"] for r in rows)
    return {
        "simultaneous": n,
        "wave_wall_s": round(time.monotonic() - started, 2),
        "statuses": statuses,
        "exit_codes": sorted({r["exit_code"] for r in rows}),
        "ok": all(r["status"] in ("passed", "overloaded") for r in rows),
        "timeouts": statuses.get("timeout", 0),
        "wall_s_p50": statistics.median(walls),
        "wall_s_max": walls[-1],
        "queue_s_max": max(r.get("queue_s", 0.0) for r in rows),
        "host_wait_s_max": max(r.get("host_wait_s", 0.0) for r in rows),
        "checks": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factors", default="4,10,20", help="wave sizes as multiples of the core count")
    parser.add_argument("--candidate", type=Path, default=EXAMPLE / "good.py")
    parser.add_argument("--suite", type=Path, default=EXAMPLE / "suite")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    subprocess.run([VERIFIER, "image", "build"], check=True, capture_output=True)
    alone = one(args.candidate, args.suite)
    waves = []
    for factor in (int(f) for f in args.factors.split(",")):
        result = wave(factor * cores, args.candidate, args.suite)
        print(
            f"{factor:>3}x = {result['simultaneous']:>3} at once: {result['statuses']}, "
            f"wave {result['wave_wall_s']} s, max wait for a slot {result['queue_s_max']} s",
            file=sys.stderr,
        )
        waves.append({"factor": factor, **result})
    out = {
        "bench": "load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": cores, "python": platform.python_version()},
        "slots": os.environ.get("VERIFIER_MAX_SANDBOXES", f"{cores} (default: the core count)"),
        "alone": alone,
        "waves": waves,
        "all_ok": all(w["ok"] for w in waves),
    }
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"load-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0 if out["all_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
