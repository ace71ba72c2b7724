"""Run programs through a sandboxing peer, for `bench/humaneval_speed.py`'s peer columns.

Runs under the peer's own interpreter (a venv of its own, never this project's), so the peers
are not our dependencies:

    python3.11 -m venv /tmp/peers
    /tmp/peers/bin/pip install 'llm-sandbox[docker]' epicbox 'urllib3<2'   # epicbox 1.1 needs urllib3 1.x

    /tmp/peers/bin/python bench/peers/peer_run.py --peer llm-sandbox --image IMAGE \
        --workers 2 --timeout 5 programs.json result.json

`programs.json` is a list of program texts (each a whole Python program whose exit code is the
verdict, as both peers judge); `result.json` gets `wall_s`, `passed` and `latencies` in the same
order. Every container gets the limits `humaneval_speed.py`'s plain `docker run` column gives
(memory, CPUs, pids, no network); llm-sandbox runs as its default user, root (it copies each
program in as a file only root may read).

- ``llm-sandbox``: its container pool (`create_pool_manager`, min = max = workers), one
  `PooledSandboxSession.run` per program. The pool hands a released container to the next
  program as it is: nothing is reset between programs (its documented behaviour).
- ``epicbox``: `epicbox.run` per program: a new container for each, removed after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

MEMORY = 1 << 30
CPUS = 1.0
PIDS = 256
VENV = "/tmp/.sandbox-venv/bin"


def llm_sandbox(programs: list[str], image: str, workers: int, timeout: float) -> tuple[list[bool], list[float], float]:
    from llm_sandbox.pool import PoolConfig, PooledSandboxSession, create_pool_manager

    pool = create_pool_manager(
        backend="docker",
        config=PoolConfig(max_pool_size=workers, min_pool_size=workers, idle_timeout=None),
        lang="python",
        image=image,
        skip_environment_setup=True,
        workdir="/tmp",
        runtime_configs={
            "network_mode": "none",
            "mem_limit": MEMORY,
            "nano_cpus": int(CPUS * 1e9),
            "pids_limit": PIDS,
            # The pool execs into a container that stays up, with the interpreter where its pooled
            # sessions look for it (`<workdir>/.sandbox-venv`: the venv its environment set-up
            # would make with pip, which needs the network; this is the same interpreter).
            "command": ["sh", "-c", f"mkdir -p {VENV} && ln -s /usr/bin/python3 {VENV}/python && exec sleep infinity"],
        },
    )
    passed = [False] * len(programs)
    latencies = [0.0] * len(programs)
    errors: list[str] = []

    def one(i: int) -> None:
        t = time.monotonic()
        try:
            with PooledSandboxSession(pool_manager=pool, workdir="/tmp") as session:
                passed[i] = session.run(programs[i], timeout=timeout).exit_code == 0
        except Exception as exc:  # noqa: BLE001 - a timeout or an error: not a pass, as the peer reports it
            errors.append(f"{exc.__class__.__name__}: {exc}"[:200])
            passed[i] = False
        latencies[i] = time.monotonic() - t

    try:
        deadline = time.monotonic() + 120
        while len(pool._pool) < workers and time.monotonic() < deadline:  # noqa: SLF001 - wait for the pre-warm
            time.sleep(0.05)
        t0 = time.monotonic()
        with ThreadPoolExecutor(workers) as ex:
            list(ex.map(one, range(len(programs))))
        wall = time.monotonic() - t0
        if errors:
            print(f"llm-sandbox: {len(errors)} programs raised, first: {errors[0]}", file=sys.stderr)
        return passed, latencies, wall
    finally:
        pool.close()


def epicbox_run(programs: list[str], image: str, workers: int, timeout: float) -> tuple[list[bool], list[float], float]:
    import epicbox

    epicbox.configure(profiles=[epicbox.Profile("python", image, user="2000:2000", network_disabled=True)])
    passed = [False] * len(programs)
    latencies = [0.0] * len(programs)

    def one(i: int) -> None:
        t = time.monotonic()
        files = [{"name": "main.py", "content": programs[i].encode()}]
        result = epicbox.run(
            "python",
            "python3 main.py",
            files=files,
            limits={"cputime": int(timeout), "realtime": int(timeout) + 1, "memory": MEMORY >> 20, "processes": PIDS},
        )
        passed[i] = result["exit_code"] == 0 and not result["timeout"]
        latencies[i] = time.monotonic() - t

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(one, range(len(programs))))
    return passed, latencies, time.monotonic() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", choices=("llm-sandbox", "epicbox"), required=True)
    parser.add_argument("--image", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("programs", type=Path)
    parser.add_argument("result", type=Path)
    args = parser.parse_args()
    programs: list[str] = json.loads(args.programs.read_text())
    run = llm_sandbox if args.peer == "llm-sandbox" else epicbox_run
    passed, latencies, wall = run(programs, args.image, args.workers, args.timeout)
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    result: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "samples_per_s": round(len(programs) / wall, 2),
        "p50_s": round(q[49], 3),
        "p95_s": round(q[94], 3),
        "passed": passed,
    }
    args.result.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
