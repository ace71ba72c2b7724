"""Pages a reuse check copies, by process (issue 37 section 5: where a reuse check's time goes).

A reuse container forks one candidate process per test from its zygote. After a fork every page
is shared copy-on-write, so each page a process then writes is a page fault and a 4 KiB copy,
and in CPython touching an object writes its reference count: on this VM a fault costs a few
microseconds, and faults are most of a candidate process's CPU before the candidate's code runs.

This counts them. A probe candidate (HumanEval/0's entry point) reads, at its first call:
its own page faults and CPU so far (its life as the sweeper that reset the container, the
standby, then the candidate process: fork, uid, sweep, set-up, the import of the candidate),
and the cumulative faults and CPU ticks of its parent (the zygote) and of PID 1 (the trusted
server) from /proc. Run as n checks on one reuse container; the zygote's and the trusted
server's per-check figures are the mean over the checks after the first five. The counts are
the kernel's, not timings: they do not depend on the machine's load.

    python bench/fork_pages.py [--n 60] [--other-image TAG ...]

--other-image: another checkout's image (built with `PYTHONPATH=<checkout> python -m verifier
image build`), measured interleaved with this checkout's. Writes
bench/results/fork-pages-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import result_file  # noqa: E402
from verifier import Candidate, Verifier  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox.container import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

TASK = "HumanEval/0"
#: The probe: what it reads is raised as the failure's message (the one channel a candidate has).
PROBE = """
import os, resource

_AT_IMPORT = resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _stat(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[11]) + int(fields[12])


def has_close_elements(numbers, threshold):
    now = resource.getrusage(resource.RUSAGE_SELF)
    zygote, trusted = _stat(os.getppid()), _stat(1)
    raise ValueError(
        f"PROBE {_AT_IMPORT} {now.ru_minflt} {now.ru_utime + now.ru_stime} "
        f"{zygote[0]} {zygote[1]} {trusted[0]} {trusted[1]} END"
    )
"""
SKIP = 5  # the first checks of a container: its first reset and cold paths


def measure(image: str, suite: Path, n: int) -> dict[str, float]:
    rows: list[list[float]] = []
    with Verifier.pooled(PoolConfig(policy="reuse", size=1, preload=""), image=image, limits=he.bench_limits(5)) as v:
        for _ in range(n):
            evidence = v.check(Candidate.from_text(PROBE), suite)
            detail = evidence.failures[0].detail_untrusted if evidence.failures else ""
            if "PROBE " not in detail:
                raise SystemExit(f"the probe did not answer ({evidence.status.value}): {evidence.reason}")
            rows.append([float(x) for x in detail.split("PROBE ", 1)[1].split(" END", 1)[0].split()])
    tick = 1 / os.sysconf("SC_CLK_TCK")
    checks = len(rows) - 1 - SKIP

    def per_check(column: int) -> float:
        return (rows[-1][column] - rows[SKIP][column]) / checks

    return {
        "candidate_faults_at_import": statistics.median(r[0] for r in rows[SKIP:]),
        "candidate_faults_at_first_call": statistics.median(r[1] for r in rows[SKIP:]),
        "candidate_cpu_ms_at_first_call": round(1000 * statistics.median(r[2] for r in rows[SKIP:]), 3),
        "zygote_faults_per_check": round(per_check(3), 1),
        "zygote_cpu_ms_per_check": round(1000 * tick * per_check(4), 3),
        "trusted_faults_per_check": round(per_check(5), 1),
        "trusted_cpu_ms_per_check": round(1000 * tick * per_check(6), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60, help="checks per image and round (default 60)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the images interleaved (default 2)")
    parser.add_argument("--other-image", action="append", default=[], help="another checkout's image tag")
    args = parser.parse_args()
    if args.n < SKIP + 3:
        parser.error(f"--n must be at least {SKIP + 3}")
    build(connect())
    images = {"this checkout": image_tag(), **{tag: tag for tag in args.other_image}}
    problems = he.load_problems()
    out: dict[str, Any] = {
        "bench": "fork-pages",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "n": args.n,
        "load_1min_at_start": round(os.getloadavg()[0], 2),
        "images": images,
        "rounds": {name: [] for name in images},
    }
    with tempfile.TemporaryDirectory(prefix="fork-pages-") as tmp:
        (suite,) = he.write_suites(Path(tmp), {TASK: problems[TASK]})
        for round_ in range(args.rounds):
            for name, image in images.items():
                row = measure(image, suite, args.n)
                out["rounds"][name].append(row)
                print(round_, name, json.dumps(row), file=sys.stderr, flush=True)
    out["load_1min_at_end"] = round(os.getloadavg()[0], 2)
    result_file.write("fork-pages", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
