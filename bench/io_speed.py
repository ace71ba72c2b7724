"""Programs on stdin/stdout: the sandboxed `bench io` path against a plain, unsandboxed judge.

In one run, on the same samples (the shipped set by default), the same workers and limits:
  (a) plain: bench/io_plain.py, a new `python3` per case on the host, same comparison and rules
  (b) reuse: verifier, warm `reuse` pool (what `verifier bench io` runs), timed once the pool is warm
Reports both walls and their ratio, verdict agreement per sample, the samples whose status differs
from the one the set names (`expect`), and the per-case cost of the sandboxed program path; then
a 100-case problem (a + b, a trivial program) judged one sample at a time by both, per case.

    python bench/io_speed.py [--workers 2] [--samples F --problems F] [--repeat 1]

Writes bench/results/io-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.io_plain import judge_all, judge_sample  # noqa: E402
from verifier.bench import io as bio  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

SHIPPED = HERE.parent / "examples" / "programs"
HUNDRED = {
    "problem_id": "hundred",
    "tests": [{"input": f"{i} {i * 7}\n", "output": f"{i * 8}\n"} for i in range(100)],
    "time_limit_s": 2.0,
}
TRIVIAL = "a, b = map(int, input().split())\nprint(a + b)\n"


def hundred_cases(reps: int) -> dict[str, Any]:
    """One 100-case problem, one sample at a time (warm pool of one vs the plain judge): per case."""
    from verifier import Candidate, Verifier

    problem = bio.Problem(spec := bio.IOProblem.model_validate(HUNDRED), bio.problem_suite(spec))
    limits = bio.bench_limits([problem])
    ours: list[float] = []
    tests: list[float] = []
    own: list[float] = []
    with Verifier.pooled(PoolConfig(policy="reuse", size=1, preload=""), limits=limits, image=image_tag()) as v:
        v.check(Candidate.from_text(TRIVIAL), problem.suite)  # warm
        for _ in range(reps):
            t = time.monotonic()
            ev = v.check(Candidate.from_text(TRIVIAL), problem.suite)
            ours.append(time.monotonic() - t)
            assert ev.ok, ev.reason
            tests.append(ev.durations.tests_s)
            own.append(statistics.median(c.time_s for c in ev.cases))
    plain = []
    for _ in range(reps):
        result = judge_sample(TRIVIAL, problem, limits.output_bytes)
        assert result.status == "passed"
        plain.append(result.seconds)
    return {
        "cases": 100,
        "reps": reps,
        "reuse_check_s_p50": round(statistics.median(ours), 3),
        "reuse_ms_per_case": round(statistics.median(ours) * 10, 2),
        "reuse_job_ms_per_case": round(statistics.median(tests) * 10, 2),
        "reuse_case_time_ms_p50": round(statistics.median(own) * 1000, 2),
        "plain_s_p50": round(statistics.median(plain), 3),
        "plain_ms_per_case": round(statistics.median(plain) * 10, 2),
    }


def split_seconds(r: dict[str, Any]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for ev, plain in zip(r["ours"].evidence, r["plain"], strict=True):
        group = out.setdefault("timeout" if ev.status.value == "timeout" else "other", {"reuse": 0.0, "plain": 0.0})
        group["reuse"] += ev.durations.total_s
        group["plain"] += plain.seconds
    return {k: {kk: round(vv, 2) for kk, vv in v.items()} for k, v in out.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=Path, default=SHIPPED / "samples.jsonl")
    parser.add_argument("--problems", type=Path, default=SHIPPED / "problems.jsonl")
    parser.add_argument("--repeat", type=int, default=1, help="Run both judges this many times, alternating.")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--hundred-reps", type=int, default=5, help="Runs of the 100-case problem (0: skip).")
    parser.add_argument(
        "--shared-slots",
        action="store_true",
        help="Queue for the machine-wide sandbox slots with everyone else's jobs (default: a private slots folder, "
        "so that, like the plain judge, the bench competes with other work for CPU only).",
    )
    args = parser.parse_args()
    if not args.shared_slots:
        os.environ["VERIFIER_SLOTS_DIR"] = tempfile.mkdtemp(prefix="io-speed-slots-")
    build(connect())
    problems = bio.load_problems(args.problems)
    samples = bio.read_samples(args.samples, problems)
    load_before = os.getloadavg()
    rounds: list[dict[str, Any]] = []
    for i in range(args.repeat):
        print(f"== round {i + 1}: plain", file=sys.stderr, flush=True)
        plain, plain_wall = judge_all(samples, problems, args.workers)
        print(f"== round {i + 1}: reuse", file=sys.stderr, flush=True)
        ours = bio.evaluate(samples, problems, ks=[1], workers=args.workers, image=image_tag(), progress=False)
        rounds.append({"plain": plain, "plain_wall": plain_wall, "ours": ours})
        print(f"   plain {plain_wall:.2f} s, reuse {ours.summary['wall_s']:.2f} s", file=sys.stderr, flush=True)
    hundred = hundred_cases(args.hundred_reps) if args.hundred_reps > 0 else None
    last = rounds[-1]
    evidence = last["ours"].evidence
    statuses = [ev.status.value for ev in evidence]
    plain_statuses = [r.status for r in last["plain"]]
    cases = [c for ev in evidence for c in ev.cases if c.ran]
    ran = sum(len([c for c in ev.cases if c.ran]) for ev in evidence)
    per_case = [ev.durations.tests_s / max(1, sum(c.ran for c in ev.cases)) for ev in evidence]
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "samples": len(samples),
        "problems": len(problems),
        "workers": args.workers,
        "slots": "shared" if args.shared_slots else "private",
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "rounds": [
            {
                "plain_wall_s": round(r["plain_wall"], 2),
                "reuse_wall_s": r["ours"].summary["wall_s"],
                "reuse_startup_s": r["ours"].summary["startup_s"],
                "reuse_queue_s_sum": round(sum(ev.durations.queue_s for ev in r["ours"].evidence), 2),
                "ratio_reuse_over_plain": round(r["ours"].summary["wall_s"] / r["plain_wall"], 3),
                # Summed per-sample seconds, split: samples that ran out of time (both judges wait out
                # their limits; ours in charged time, so on a busy host longer in wall time) and the rest.
                "sample_seconds": split_seconds(r),
                "host_wait_s_sum": round(sum(ev.durations.host_wait_s for ev in r["ours"].evidence), 2),
            }
            for r in rounds
        ],
        "ratio_median": round(
            statistics.median(r["ours"].summary["wall_s"] / r["plain_wall"] for r in rounds),
            3,
        ),
        "agreement": sum(a == b for a, b in zip(statuses, plain_statuses, strict=True)) / len(samples),
        "disagreements": [
            {"problem_id": s.problem_id, "note": s.line.get("note"), "ours": a, "plain": b}
            for s, a, b in zip(samples, statuses, plain_statuses, strict=True)
            if a != b
        ],
        "unexpected": [
            {"problem_id": s.problem_id, "note": s.line.get("note"), "expect": s.line["expect"], "ours": a}
            for s, a in zip(samples, statuses, strict=True)
            if "expect" in s.line and a != s.line["expect"]
        ],
        "statuses": last["ours"].summary["statuses"],
        "pass@1": last["ours"].summary.get("pass@1"),
        "per_case": {
            "cases_run": ran,
            # in-container time of a program job divided by its cases: fork, feed, wait, reap, reset, compare
            "job_time_per_case_ms_p50": round(statistics.median(per_case) * 1000, 2),
            # the program's own charged time in a case (fork to exit), and its CPU time
            "case_time_ms_p50": round(statistics.median(c.time_s for c in cases) * 1000, 2),
            "case_cpu_ms_p50": round(statistics.median(c.cpu_s for c in cases) * 1000, 2),
            "case_peak_rss_mib_p50": round(statistics.median(c.memory_bytes for c in cases) / 2**20, 1),
        },
        "hundred_cases": hundred,
    }
    out = args.out or HERE / "results" / f"io-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("disagreements", "unexpected")}, indent=2))
    print(f"wrote {out}", file=sys.stderr)
    return 0 if not report["disagreements"] and not report["unexpected"] else 1


if __name__ == "__main__":
    sys.exit(main())
