"""Programs in other languages (issue 36 §4), in one run: per language the cold (a new container
per check) and warm (`reuse` pool) latency of a check against the plain judge
(`bench/languages_plain.py`: the same commands on the host, no sandbox), and `/run_code`
throughput for C++ and Java against Python through a real `verifier serve` on 127.0.0.1.

Per language (the corpus' correct `sum` solution of `tests/programs/language_corpus.py`, four
cases; Python's is written here): the whole check's wall (compile + every case) and the compile
step's wall (the evidence's `program.compile.wall_s`; for the plain judge the same judge run with
no case), the median of `--repeat` runs each; per case is (whole - compile) / cases. The plain
judge is skipped for a language whose toolchain the host lacks.

`/run_code`: `--requests` requests per language (the sum problem's cases in turn, verl's request
body: one case per request, stdout compared by the client), `--concurrency` in flight at once;
requests/s, p50/p99, and how many were answered right. Both the checks and the server queue for
a slot folder of this run's own (`--workers` slots), so neither waits for slots other processes
hold; the machine's 1-minute load average is recorded before and after each part (the machine
may be shared).

    python bench/languages_speed.py [--repeat 3] [--requests 40] [--concurrency 4] [--workers 2]

Writes bench/results/languages-speed-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests" / "programs"))

import language_corpus as corpus  # noqa: E402

from bench.languages_plain import available, judge  # noqa: E402
from bench.run_code_load import quantile, start_server, verl_reads  # noqa: E402
from verifier import Candidate, Limits, Verifier  # noqa: E402
from verifier.limits import PoolConfig  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, language_image  # noqa: E402

PROBLEM = "sum"
LANGUAGES = ("python", "c", "cpp", "java", "nodejs", "go", "rust", "bash")
PYTHON_SUM = "n = int(input())\nprint(sum(int(x) for x in input().split()))\n"
RUN_CODE_LANGUAGES = ("python", "cpp", "java")
REQUEST_DEADLINE_S = 300.0


def source_of(language: str) -> str:
    if language == "python":
        return PYTHON_SUM
    return next(s.source for s in corpus.SOLUTIONS if (s.problem, s.language, s.note) == (PROBLEM, language, "ok"))


def write_suite(root: Path) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "suite.toml").write_text(
        'kind = "program"\n[program]\n'
        f"time_limit_s = {corpus.TIME_LIMIT_S}\nmemory_bytes = {corpus.MEMORY_BYTES}\n"
        f"compile_timeout_s = {corpus.COMPILE_TIMEOUT_S}\n"
    )
    for i, (given, want) in enumerate(corpus.PROBLEMS[PROBLEM], 1):
        (root / "cases" / f"{i}.in").write_text(given)
        (root / "cases" / f"{i}.out").write_text(want)
    return root


def load() -> float:
    return round(os.getloadavg()[0], 2)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def timed_checks(verifier: Verifier, language: str, suite: Path, repeat: int) -> dict[str, Any]:
    """`repeat` checks of the language's correct solution: medians of the whole wall and the compile's."""
    walls, compiles, statuses = [], [], []
    for _ in range(repeat):
        began = time.monotonic()
        evidence = verifier.check(Candidate.from_text(source_of(language)), suite, language=language)
        walls.append(time.monotonic() - began)
        step = evidence.program.compile if evidence.program is not None else None
        compiles.append(step.wall_s if step is not None else 0.0)
        statuses.append(evidence.status.value)
    cases = len(corpus.PROBLEMS[PROBLEM])
    whole, compiled = median(walls), median(compiles)
    return {
        "wall_s": whole,
        "compile_wall_s": compiled,
        "per_case_s": round((whole - compiled) / cases, 4),
        "statuses": sorted(set(statuses)),
    }


def timed_plain(language: str, repeat: int) -> dict[str, Any] | None:
    if not available(language):
        return None
    cases = corpus.PROBLEMS[PROBLEM]
    limits = {
        "time_limit_s": corpus.TIME_LIMIT_S,
        "memory_bytes": corpus.MEMORY_BYTES,
        "compile_timeout_s": corpus.COMPILE_TIMEOUT_S,
    }
    walls, compiles, statuses = [], [], []
    for _ in range(repeat):
        began = time.monotonic()
        statuses.append(judge(language, source_of(language), cases, **limits))  # type: ignore[arg-type]
        walls.append(time.monotonic() - began)
        began = time.monotonic()
        judge(language, source_of(language), [], **limits)  # type: ignore[arg-type]
        compiles.append(time.monotonic() - began)
    whole, compiled = median(walls), median(compiles)
    return {
        "wall_s": whole,
        "compile_wall_s": compiled,
        "per_case_s": round((whole - compiled) / len(cases), 4),
        "statuses": sorted(set(statuses)),
    }


async def run_code_wave(url: str, language: str, requests: int, concurrency: int) -> dict[str, Any]:
    cases = corpus.PROBLEMS[PROBLEM]
    semaphore = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    verdicts: dict[str, int] = {}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=REQUEST_DEADLINE_S, limits=limits) as http:

        async def one(n: int) -> None:
            given, want = cases[n % len(cases)]
            body = {
                "compile_timeout": corpus.COMPILE_TIMEOUT_S,
                "run_timeout": corpus.TIME_LIMIT_S,
                "code": source_of(language),
                "stdin": given,
                "memory_limit_MB": corpus.MEMORY_BYTES // 1024**2,
                "language": language,
                "files": {},
                "fetch_files": [],
            }
            async with semaphore:
                began = time.monotonic()
                for attempt in range(3):  # verl's client: a 504 is tried again
                    try:
                        answer = await http.post(url, json=body)
                    except httpx.HTTPError:
                        verdicts["lost"] = verdicts.get("lost", 0) + 1
                        return
                    if answer.status_code != 504:
                        break
                    await asyncio.sleep(attempt + 1)
                latencies.append(time.monotonic() - began)
                read = verl_reads(answer.json(), want) if answer.status_code == 200 else -1
                verdicts[str(read)] = verdicts.get(str(read), 0) + 1

        began = time.monotonic()
        await asyncio.gather(*(one(n) for n in range(requests)))
        wall = time.monotonic() - began
    return {
        "language": language,
        "requests": requests,
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "requests_per_s": round(requests / wall, 2),
        "p50_s": quantile(latencies, 50) if latencies else None,
        "p99_s": quantile(latencies, 99) if latencies else None,
        "verl_verdicts": verdicts,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    args = parser.parse_args()
    client = connect()
    image, _ = build(client)
    language_image(client, "cpp")  # one image for every language: found, or built once (minutes)
    out: dict[str, Any] = {
        "bench": "languages-speed",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "problem": PROBLEM,
        "cases": len(corpus.PROBLEMS[PROBLEM]),
        "repeat": args.repeat,
        "workers": args.workers,
        "languages": {},
        "run_code": [],
    }
    limits = Limits(timeout_s=60)
    with tempfile.TemporaryDirectory(prefix="languages-speed-") as tmp:
        os.environ["VERIFIER_SLOTS_DIR"] = str(Path(tmp) / "slots")
        os.environ["VERIFIER_MAX_SANDBOXES"] = str(args.workers)
        suite = write_suite(Path(tmp) / "suite")
        cold = Verifier(image=image, limits=limits)
        with Verifier.pooled(PoolConfig(policy="reuse", size=1, preload=""), image=image, limits=limits) as warm:
            for language in args.languages.split(","):
                before = load()
                warm.check(Candidate.from_text(source_of(language)), suite, language=language)  # the pool warmed
                row = {
                    "plain": timed_plain(language, args.repeat),
                    "cold": timed_checks(cold, language, suite, args.repeat),
                    "warm": timed_checks(warm, language, suite, args.repeat),
                    "load_1min": [before, load()],
                }
                out["languages"][language] = row
                print(language, json.dumps(row), flush=True)
        proc, url, token = start_server(Path(tmp), args.workers)
        try:
            for language in RUN_CODE_LANGUAGES:
                before = load()
                asyncio.run(run_code_wave(f"{url}/t/{token}/run_code", language, 2, 2))  # its pool warmed
                wave = asyncio.run(
                    run_code_wave(f"{url}/t/{token}/run_code", language, args.requests, args.concurrency)
                )
                wave["load_1min"] = [before, load()]
                out["run_code"].append(wave)
                print(json.dumps(wave), flush=True)
        finally:
            proc.terminate()
            proc.wait(120)
    out["machine"]["load_after"] = os.getloadavg()
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"languages-speed-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
