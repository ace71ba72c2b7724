"""HumanEval through the Ray backend against the local warm pool, in one run.

Starts a two-node Ray cluster on this machine (head + one node, loopback, a port and temp dir of
its own; as the tests do), then runs each configuration in a fresh driver process (so that its
memory is its own), on the same samples, same limits, same total number of containers:

  local-328     the local reuse pool (2 containers), bench/humaneval_speed.py's 328 samples
  ray-328       the Ray backend, 2 nodes x 1 container (reuse)
  local-1640    the local pool, the 328 set five times, each copy made distinct
  ray-1640      the Ray backend on the 1,640 set (the driver's memory over a long batch)
  ray-kill-328  the Ray backend on the 328 set, the extra node's raylet killed mid-batch

and checks that every Ray run gives the local pool's evidence (status and evidence_id) sample by
sample. Per run: wall time (pool start included and excluded), the Ray overhead per sample (the
driver's round trip minus the time inside the node's actor), reruns, the driver's peak RSS and
its growth over the batch, and what each node costs in memory (Ray's processes, the actor, the
lifeline, the warm containers).

    python bench/ray_humaneval.py [--timeout 5] [--only local-328,ray-328,...]

Writes bench/results/ray-humaneval-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.batch import verify_batch  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.limits import Limits, PoolConfig  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build  # noqa: E402
from verifier.verify import Verifier  # noqa: E402

RUNS = ("local-328", "ray-328", "local-1640", "ray-1640", "ray-kill-328")
CONTAINERS = 2  # the same in every run: the local pool's size, or 2 nodes x 1


def distinct_copies(samples: list[dict[str, Any]], times: int) -> list[dict[str, Any]]:
    """The set `times` over, each copy's completions made distinct by a trailing comment."""
    out = []
    for k in range(times):
        for s in samples:
            out.append({**s, "completion": s["completion"] + f"\n# copy {k}\n", "copy": k})
    return out


def samples_for(run: str) -> list[dict[str, Any]]:
    base = sample_set(he.load_problems())
    return distinct_copies(base, 5) if run.endswith("1640") else base


# -- memory ----------------------------------------------------------------------------------
def status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """Peak RSS of this process, sampled every 50 ms (VmHWM counts imports and start-up too)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kib = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak_kib = max(self.peak_kib, status_kib(os.getpid(), "VmRSS"))
            time.sleep(0.05)


def container_memory(pool_ids: list[str]) -> list[int]:
    """Memory usage (bytes, the engine's figure) of every container of these pools."""
    api = connect().api
    out = []
    for pool_id in pool_ids:
        for c in api.containers(filters={"label": f"org.verifier.pool-id={pool_id}"}):
            stats = api.stats(c["Id"], stream=False)
            mem = stats.get("memory_stats") or {}
            usage = int(mem.get("usage", 0)) - int((mem.get("stats") or {}).get("cache", 0))
            out.append(usage)
    return out


def lifeline_pid(actor_pid: int) -> int | None:
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.endswith(b"cluster/lifeline.py") for a in cmd) and str(actor_pid).encode() in cmd:
                return int(p.name)
    return None


# -- one run, in its own driver process -------------------------------------------------------
def child(run: str, address: str, timeout: float, kill_pid: int | None) -> dict[str, Any]:
    samples = samples_for(run)
    problems = he.load_problems()
    items = [he.Sample(s["task_id"], s["completion"], s) for s in samples]
    jobs, mapping = he.unique_jobs(items, problems)
    limits = Limits(timeout_s=timeout + 10, call_timeout_s=timeout)
    sampler = RssSampler()
    sampler.start()
    t0 = time.monotonic()
    on_ray = run.startswith("ray")
    if on_ray:
        from verifier.cluster import RayBackend, ray_verifier

        # HumanEval suites use the direct runner: nothing to pre-import (as the CLI does).
        verifier = ray_verifier(
            address, PoolConfig(policy="reuse", preload=""), per_node=CONTAINERS // 2, limits=limits
        )
    else:
        verifier = Verifier.pooled(PoolConfig(policy="reuse", size=CONTAINERS, preload=""), limits=limits)
    out: dict[str, Any] = {"run": run, "samples": len(samples), "distinct": len(jobs)}
    with verifier:
        backend = verifier.backend
        backend.warm_up()  # type: ignore[attr-defined]
        t_ready = time.monotonic()
        cpu_ready = time.process_time()
        load_ready = os.getloadavg()[0]
        rss_ready = status_kib(os.getpid(), "VmRSS")
        workers = int(getattr(backend, "slots", CONTAINERS))  # Ray: every node's containers + backlog
        answered: list[int] = []
        killed: list[float] = []

        def on_result(index: int, _ev: object) -> None:
            answered.append(index)
            if kill_pid is not None and not killed and len(answered) >= len(jobs) // 2:
                os.kill(kill_pid, 9)  # the extra node's raylet: a node failure, mid-batch
                killed.append(time.monotonic() - t_ready)

        evidence = verify_batch(verifier, jobs, workers=workers, progress=False, on_result=on_result)
        wall = time.monotonic() - t_ready
        cpu_batch = time.process_time() - cpu_ready
        rss_end = status_kib(os.getpid(), "VmRSS")
        out["results_per_job"] = sorted(set(answered)) == list(range(len(jobs))) and len(answered) == len(jobs)
        if on_ray:
            assert isinstance(backend, RayBackend)
            stats = backend.stats()
            nodes = []
            for info in stats.nodes:
                life = lifeline_pid(info.pid)
                nodes.append(
                    {
                        "name": info.name,
                        "actor_rss_mib": round(status_kib(info.pid, "VmRSS") / 1024, 1),
                        "lifeline_rss_mib": round(status_kib(life, "VmRSS") / 1024, 1) if life else None,
                        "container_mib": [round(b / 2**20, 1) for b in container_memory([info.pool_id])],
                    }
                )
            out["ray"] = {
                "nodes": nodes,
                "jobs": stats.jobs,
                "reruns": stats.reruns,
                "lost": [x.model_dump() for x in stats.lost],
                "overhead_ms_per_job": round(1000 * stats.ray_overhead_s / max(stats.jobs, 1), 2),
                "killed_at_s": round(killed[0], 2) if killed else None,
            }
        else:
            pool_id = str(getattr(backend, "pool_id", ""))
            out["local"] = {"container_mib": [round(b / 2**20, 1) for b in container_memory([pool_id])]}
    sampler.stop.set()
    out.update(
        {
            "startup_s": round(t_ready - t0, 2),
            "wall_s": round(wall, 2),
            "wall_with_startup_s": round(time.monotonic() - t0, 2),
            "samples_per_s": round(len(samples) / wall, 2),
            # The driver's own CPU (hashing, job and evidence building, Ray calls): the central cost.
            "driver_cpu_ms_per_sample": round(1000 * cpu_batch / len(samples), 2),
            "load_average_at_start": round(load_ready, 2),
            "driver_rss_mib": {
                "ready": round(rss_ready / 1024, 1),
                "end": round(rss_end / 1024, 1),
                "peak": round(sampler.peak_kib / 1024, 1),
                "growth_over_batch": round((rss_end - rss_ready) / 1024, 1),
            },
            "statuses": [evidence[j].status.value for j in mapping],
            "evidence_ids": [evidence[j].evidence_id for j in mapping],
            "nodes_per_sample": [evidence[j].node for j in mapping],
        }
    )
    return out


# -- the whole run ------------------------------------------------------------------------------
def idle_container_mib(preload: str) -> float:
    """Memory of one warm, idle container (the engine's figure, page cache excluded)."""
    from verifier.sandbox.image import image_tag
    from verifier.sandbox.pool import WarmPool

    with WarmPool(PoolConfig(size=1, policy="reuse", preload=preload), image=image_tag()) as pool:
        pool.warm_up()
        time.sleep(1.0)
        return round(container_memory([pool.pool_id])[0] / 2**20, 1)


def node_memory_mib(pids: list[int]) -> float:
    return round(sum(status_kib(p, "VmRSS") for p in pids) / 1024, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--only", default=",".join(RUNS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--kill-pid", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.address, args.timeout, args.kill_pid)))
        return 0

    from tests.ray.cluster import ENV, LocalRayCluster

    build(connect())
    root = Path(tempfile.mkdtemp(prefix="vray-", dir="/tmp"))
    cluster = LocalRayCluster(root)
    results: dict[str, Any] = {}
    try:
        cluster.start_head()
        extra = cluster.add_node("node1")
        time.sleep(3)  # the second node registers with the head
        ray_processes = {n.name: node_memory_mib(n.processes()) for n in cluster.nodes}
        idle_container = {
            "preload none": idle_container_mib(""),
            "preload pytest,hypothesis": idle_container_mib("pytest,hypothesis"),
        }
        for run in args.only.split(","):
            print(f"== {run}", file=sys.stderr, flush=True)
            cmd = [sys.executable, __file__, "--child", run, "--address", cluster.address]
            cmd += ["--timeout", str(args.timeout)]
            if run == "ray-kill-328":
                cmd += ["--kill-pid", str(extra.raylet_pid())]
            done = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=ROOT)
            if done.returncode != 0:
                raise SystemExit(f"{run} failed:\n{done.stderr[-4000:]}")
            results[run] = json.loads(done.stdout.strip().splitlines()[-1])
            shown = {k: v for k, v in results[run].items() if not isinstance(v, list)}
            print(json.dumps(shown), file=sys.stderr, flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)

    comparisons = {}
    for run, res in results.items():
        if run.startswith("ray"):
            size = "1640" if run.endswith("1640") else "328"
            local = results.get(f"local-{size}")
            if local is None:
                continue
            same = [
                (a, b) == (c, d)
                for a, b, c, d in zip(
                    res["statuses"], res["evidence_ids"], local["statuses"], local["evidence_ids"], strict=True
                )
            ]
            comparisons[run] = {
                "against": f"local-{size}",
                "identical_evidence": sum(same),
                "of": len(same),
                "one_result_per_sample": len(res["statuses"]) == res["samples"],
                "overhead_ms_per_sample_wall": round(1000 * (res["wall_s"] - local["wall_s"]) / res["samples"], 2),
                "wall_ratio": round(res["wall_s"] / local["wall_s"], 3),
            }
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "containers": CONTAINERS,
        "timeout_s": args.timeout,
        "ray_node_processes_rss_mib_idle": ray_processes,
        "idle_warm_container_mib": idle_container,
        "comparisons": comparisons,
        "runs": {k: {kk: vv for kk, vv in v.items() if not isinstance(vv, list)} for k, v in results.items()},
        "per_sample": {k: {"statuses": v["statuses"], "nodes": v["nodes_per_sample"]} for k, v in results.items()},
    }
    out = args.out or HERE / "results" / f"ray-humaneval-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({"comparisons": comparisons, "runs": report["runs"]}, indent=2))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
