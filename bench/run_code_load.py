"""`/run_code` as verl's code reward calls it, against `verifier bench io` on the same cases, in one run.

verl (`verl/utils/reward_score/sandbox_fusion/utils.py`) sends one `/run_code` request per test
case (the program, the case's input on stdin), many at once under a client-side semaphore, and
compares the answer's stdout with the expected output itself (`rstrip("\\n")` equality). This
plays that client: the programs of `examples/programs` (the samples that pass: a right answer must
be read as right) and every case of their problems, N requests in flight at once (16, 64, 256),
each a connection of its own (`httpx.AsyncClient`), each with verl's request body and its 504
retry rule (three tries, 1 s and 2 s apart). The same cases go through `verifier bench io` (the
library, `bio.evaluate`, warm pool, cases of one sample in one sandbox job) in the same run,
before the waves and after them.

Reported per concurrency (each with the machine's 1-minute load average at its start and end: the
machine may be shared): cases per second (and the ratio to bench io's, the mean of the runs
before and after), p50/p99 latency of a request, how many requests each verdict got (verl's
words: True, False, -1 sandbox error, -2 runtime error, -3 timeout, -4 compile error), requests
lost (no answer), and agreement with bench io's case verdicts.

    python bench/run_code_load.py [--concurrency 16,64,256] [--samples 20] [--workers 2]

Both sides queue for a slot folder of this run's own (VERIFIER_SLOTS_DIR, `--workers` slots), so
neither waits for slots other processes hold. Only against 127.0.0.1; bounded in count (each wave
sends each case once) and in time (each request has a deadline). Writes
bench/results/run-code-load-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier.bench import io as bio  # noqa: E402
from verifier.evidence import Status  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build  # noqa: E402

PROGRAMS = HERE.parent / "examples" / "programs"
REQUEST_DEADLINE_S = 300.0
#: verl's client: 504 is retried, three tries in all, 1 s then 2 s apart.
VERL_TRIES = 3


def quantile(values: list[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100)[q - 1], 3) if len(values) > 1 else round(values[0], 3)


def verl_reads(answer: dict[str, Any], expected: str) -> object:
    """What verl's `_process_single_case` makes of an answer (restated)."""
    status, compiled, run = answer.get("status"), answer.get("compile_result"), answer.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        if compiled and (
            compiled.get("status") in ("Error", "TimeLimitExceeded")
            or (compiled.get("status") == "Finished" and compiled.get("return_code") != 0)
        ):
            return -4
        if run and run.get("status") == "TimeLimitExceeded":
            return -3
        if run and (run.get("status") == "Error" or run.get("return_code") != 0):
            return -2
        return -1
    if status == "Success" and run and run.get("status") == "Finished":
        return str(run.get("stdout") or "").rstrip("\n") == expected.rstrip("\n")
    return -1


def start_server(folder: Path, workers: int) -> tuple[subprocess.Popen[bytes], str, str]:
    token = "load-" + secrets.token_urlsafe(24)
    (folder / "tokens.toml").write_text(
        f'[[tokens]]\nname = "verl"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\nrun_code = true\n'
        "concurrency = 1000\nrate_per_s = 100000.0\nburst = 100000\ndaily_quota = 10000000\n"
    )
    # [run_code] pool_size is not set: the default (the machine's slots) is what is measured.
    (folder / "serve.toml").write_text(
        'tokens = "tokens.toml"\nmax_in_flight = 512\nevidence_kept = 20000\n[http]\nmax_connections = 2000\n'
    )
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server's for its life
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier", "serve", "--config", str(folder / "serve.toml"), "--port", "0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", (folder / "server.log").read_text())
        if found:
            try:
                if httpx.get(found.group(1) + "/healthz", timeout=5).json()["status"] == "ok":
                    return proc, found.group(1), token
            except (httpx.HTTPError, ValueError):
                pass
        time.sleep(0.2)
    proc.kill()
    proc.wait(30)
    raise SystemExit("the server did not start:\n" + (folder / "server.log").read_text()[-3000:])


def cases_of(samples: list[bio.Sample], problems: dict[str, bio.Problem]) -> list[dict[str, Any]]:
    """One request per (sample, case), as verl makes them (run_timeout: the case's limit, rounded up)."""
    out = []
    for n, sample in enumerate(samples):
        spec = problems[sample.problem_id].spec
        for c, test in enumerate(spec.tests):
            out.append(
                {
                    "key": f"{n}/{c}",
                    "expected": test.output,
                    "body": {
                        "compile_timeout": max(1, round(spec.time_limit_s)),
                        "run_timeout": max(1, round(spec.time_limit_s)),
                        "code": sample.program,
                        "stdin": test.input,
                        "memory_limit_MB": 1024,
                        "language": "python",
                        "files": {},
                        "fetch_files": [],
                    },
                }
            )
    return out


async def _wave(url: str, cases: list[dict[str, Any]], concurrency: int) -> dict[str, Any]:
    semaphore = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    verdicts: dict[str, object] = {}
    lost: list[str] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async with httpx.AsyncClient(timeout=REQUEST_DEADLINE_S, limits=limits) as http:

        async def one(case: dict[str, Any]) -> None:
            async with semaphore:
                began = time.monotonic()
                for attempt in range(VERL_TRIES):
                    try:
                        answer = await http.post(url, json=case["body"])
                    except httpx.HTTPError:
                        lost.append(case["key"])
                        return
                    if answer.status_code != 504:
                        break
                    if attempt < VERL_TRIES - 1:
                        await asyncio.sleep(attempt + 1)
                latencies.append(time.monotonic() - began)
                if answer.status_code != 200:
                    verdicts[case["key"]] = -1
                    return
                verdicts[case["key"]] = verl_reads(answer.json(), case["expected"])

        began = time.monotonic()
        await asyncio.gather(*(one(c) for c in cases))
        wall = time.monotonic() - began
    counts: dict[str, int] = {}
    for value in verdicts.values():
        counts[str(value)] = counts.get(str(value), 0) + 1
    return {
        "concurrency": concurrency,
        "requests": len(cases),
        "answered": len(verdicts),
        "lost": len(lost),
        "wall_s": round(wall, 2),
        "cases_per_s": round(len(cases) / wall, 2),
        "p50_s": quantile(latencies, 50) if latencies else None,
        "p99_s": quantile(latencies, 99) if latencies else None,
        "verl_verdicts": counts,
        "_verdicts": verdicts,
    }


def bench_io(samples: list[bio.Sample], problems: dict[str, bio.Problem], workers: int) -> dict[str, Any]:
    load = os.getloadavg()[0]
    run = bio.evaluate(samples, problems, workers=workers, progress=False)
    cases = sum(len(problems[s.problem_id].spec.tests) for s in samples)
    per_case = {
        f"{n}/{c}": case.status is Status.PASSED for n, ev in enumerate(run.evidence) for c, case in enumerate(ev.cases)
    }
    return {
        "cases": cases,
        "wall_s": run.summary["wall_s"],
        "cases_per_s": round(cases / run.summary["wall_s"], 2),
        "passed": run.summary["passed"],
        "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "_per_case": per_case,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="16,64,256")
    parser.add_argument("--samples", type=int, default=20, help="The first N passing samples of examples/programs.")
    parser.add_argument("--workers", type=int, default=2, help="Machine slots (both sides) and bench io's workers.")
    args = parser.parse_args()
    build(connect())
    problems = bio.load_problems(PROGRAMS / "problems.jsonl")
    shipped = bio.read_samples(PROGRAMS / "samples.jsonl", problems)
    samples = [s for s in shipped if s.line.get("expect") == "passed"][: args.samples]
    cases = cases_of(samples, problems)
    out: dict[str, Any] = {
        "bench": "run-code-load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "workers": args.workers,
        "samples": len(samples),
        "cases": len(cases),
        "waves": [],
    }
    with tempfile.TemporaryDirectory(prefix="run-code-load-") as tmp:
        os.environ["VERIFIER_SLOTS_DIR"] = str(Path(tmp) / "slots")
        os.environ["VERIFIER_MAX_SANDBOXES"] = str(args.workers)
        before = bench_io(samples, problems, args.workers)
        proc, url, token = start_server(Path(tmp), args.workers)
        try:
            for concurrency in (int(c) for c in args.concurrency.split(",")):
                load = os.getloadavg()[0]
                wave = asyncio.run(_wave(f"{url}/t/{token}/run_code", cases, concurrency))
                wave["load_1min"] = [round(load, 2), round(os.getloadavg()[0], 2)]  # at its start, at its end
                out["waves"].append(wave)
                print(json.dumps({k: v for k, v in wave.items() if not k.startswith("_")}), flush=True)
        finally:
            proc.terminate()
            proc.wait(120)
        after = bench_io(samples, problems, args.workers)
    reference = (before["cases_per_s"] + after["cases_per_s"]) / 2
    for wave in out["waves"]:
        verdicts = wave.pop("_verdicts")
        wave["ratio_to_bench_io"] = round(wave["cases_per_s"] / reference, 3)
        wave["agree_with_bench_io"] = sum((verdicts.get(k) is True) == v for k, v in before["_per_case"].items())
    before.pop("_per_case")
    after.pop("_per_case")
    out["bench_io"] = {"before": before, "after": after, "mean_cases_per_s": round(reference, 2)}
    out["machine"]["load_after"] = os.getloadavg()
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"run-code-load-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
