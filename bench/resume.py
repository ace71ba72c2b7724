"""Ctrl-C in the middle of a 1,640-sample `verifier bench humaneval` run, then the same command
again (issue 25, section 4): what the second run verifies, what it serves from the evidence
store, its wall time, and its verdicts against an uninterrupted run's.

The set is `batch_speed.py`'s 1,640 (five distinct copies of HumanEval's canonical solutions and
one seeded mutant each, ten loops). Steps, each a whole CLI process started as a terminal starts
it (SIGINT not ignored):

    interrupted  the command; SIGINT once the store holds half the samples' evidence
    resumed      the same command
    again        the same command once more (everything served from the store)
    full         the same command with --no-cache (an uninterrupted run, for the verdicts)

    python bench/resume.py [--workers 2] [--timeout 5] [--at 0.5]

Writes bench/results/resume-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.batch_speed import VERIFIER, distinct_copies, with_loops, write  # noqa: E402
from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402


def lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def run(command: list[str]) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = round(time.monotonic() - started, 2)
    try:
        summary = json.loads(done.stdout)
    except ValueError:
        summary = {}
    # exit 2 with samples the host was too busy to judge (overloaded) is a run like any other:
    # those samples are not stored as verdicts, and the next run verifies them
    if done.returncode != 0 and not (done.returncode == 2 and summary.get("infra_errors")):
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    keys = ("samples", "distinct", "verified", "from_store", "passed", "wall_s", "infra_errors", "statuses")
    return {"process_wall_s": wall, "exit_code": done.returncode, **{k: summary[k] for k in keys}}


def interrupt(command: list[str], store: Path, at: int) -> dict[str, Any]:
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while lines(store) < at and proc.poll() is None:
        time.sleep(0.05)
    if proc.poll() is not None:
        raise SystemExit("the run ended before the interrupt")
    signalled = time.monotonic()
    stored_at_signal = lines(store)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=600)
    return {
        "signal_after_s": round(signalled - started, 2),
        "stored_at_signal": stored_at_signal,
        "exit_after_signal_s": round(time.monotonic() - signalled, 2),
        "exit_code": proc.returncode,
        "stored_at_exit": lines(store),
        "stderr_tail": err.decode(errors="replace")[-300:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--at", type=float, default=0.5, help="interrupt when this share of samples is stored")
    args = parser.parse_args()
    subprocess.run([VERIFIER, "image", "build"], check=True, capture_output=True)
    samples = distinct_copies(with_loops(sample_set(he.load_problems())), 5)
    out: dict[str, Any] = {
        "bench": "resume",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "workers": args.workers,
        "timeout_s": args.timeout,
        "samples": len(samples),
    }
    with tempfile.TemporaryDirectory(prefix="resume-") as tmp:
        os.environ["VERIFIER_SLOTS_DIR"] = str(Path(tmp) / "slots")
        path = Path(tmp) / "samples.jsonl"
        write(path, samples)
        store = Path(f"{path}_evidence.jsonl")
        command = [VERIFIER, "bench", "humaneval", str(path), "--workers", str(args.workers)]
        command += ["--timeout", str(args.timeout), "--k", "1"]
        out["interrupted"] = interrupt(command, store, int(len(samples) * args.at))
        out["resumed"] = run(command)
        resumed = [json.loads(x)["passed"] for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
        out["store_lines_after_resume"] = lines(store)
        out["again"] = run(command)
        out["full"] = run([*command, "--no-cache"])
        full = [json.loads(x)["passed"] for x in Path(f"{path}_results.jsonl").read_text().splitlines()]
        out["verdicts_equal_to_full_run"] = f"{sum(a == b for a, b in zip(resumed, full, strict=True))}/{len(full)}"
    out["machine"]["load_after"] = os.getloadavg()
    result = HERE / "results" / f"resume-{time.strftime('%Y%m%dT%H%M%S')}.json"
    result.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2), file=sys.stderr)
    print(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
