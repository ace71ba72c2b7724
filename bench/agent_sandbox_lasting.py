"""What a lasting agent sandbox (`DockerSandbox(idle_timeout_s=...)`) costs against a fleeting one.

- session start and close: `DockerSandbox()` (tmpfs workspace, stdin keep-alive) against
  `DockerSandbox(idle_timeout_s=600)` (a named tmpfs volume made with the container, the
  watchdog) and their `close()` (a lasting one also removes its volume);
- one `execute('echo hi')`, steady state: the lease is renewed at most every `renew_s`, so
  most calls pay nothing extra; and the call that does renew it (one more exec, as the keeper);
- `DockerSandbox.attach(id)` (one inspect) and its first `execute`, on a client of its own;
- `seed_from` of this checkout's `verifier/` folder (files and bytes in the result).

p50 over N runs each (20 by default), interleaved so load on the shared machine hits all alike.

    python bench/agent_sandbox_lasting.py [--runs 20]

Writes bench/results/agent-sandbox-lasting-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.agent_sandbox_latency import stats, timed  # noqa: E402
from verifier.agents.sandbox.box import DockerSandbox  # noqa: E402
from verifier.agents.sandbox.lease import LeaseClock  # noqa: E402
from verifier.agents.sandbox.limits import AgentSandboxLimits  # noqa: E402
from verifier.agents.sandbox.seed import MAX_SEED_FILES, read_seed  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

IDLE_S = 600.0


def sessions(runs: int, tag: str) -> dict[str, Any]:
    rows: dict[str, list[float]] = {
        "DockerSandbox() start": [],
        "DockerSandbox(idle_timeout_s=600) start": [],
        "fleeting close()": [],
        "lasting close() (container and volume)": [],
    }
    for _ in range(runs):
        t = time.perf_counter()
        fleeting = DockerSandbox(image=tag)
        rows["DockerSandbox() start"].append(time.perf_counter() - t)
        rows["fleeting close()"].append(timed(fleeting.close))
        t = time.perf_counter()
        lasting = DockerSandbox(image=tag, idle_timeout_s=IDLE_S)
        rows["DockerSandbox(idle_timeout_s=600) start"].append(time.perf_counter() - t)
        rows["lasting close() (container and volume)"].append(timed(lasting.close))
    return {name: stats(values) for name, values in rows.items()}


def commands(runs: int, tag: str) -> dict[str, Any]:
    rows: dict[str, list[float]] = {
        "fleeting execute('echo hi')": [],
        "lasting execute('echo hi'), lease covered": [],
        "lasting execute('echo hi') that renews the lease": [],
        "attach(id) on a client of its own": [],
        "first execute('echo hi') after attach (renews)": [],
    }
    limits = AgentSandboxLimits()
    with (
        DockerSandbox(image=tag, limits=limits) as fleeting,
        DockerSandbox(image=tag, idle_timeout_s=IDLE_S) as lasting,
    ):
        fleeting.execute("true")
        lasting.execute("true")
        for _ in range(runs):
            rows["fleeting execute('echo hi')"].append(timed(lambda: fleeting.execute("echo hi")))
            rows["lasting execute('echo hi'), lease covered"].append(timed(lambda: lasting.execute("echo hi")))
            lasting._lease = LeaseClock(IDLE_S)  # noqa: SLF001 - forget the last write: this call renews
            rows["lasting execute('echo hi') that renews the lease"].append(timed(lambda: lasting.execute("echo hi")))
            t = time.perf_counter()
            again = DockerSandbox.attach(lasting.id)
            rows["attach(id) on a client of its own"].append(time.perf_counter() - t)
            rows["first execute('echo hi') after attach (renews)"].append(timed(lambda a=again: a.execute("echo hi")))
            again.release()
    return {name: stats(values) for name, values in rows.items()}


def seeding(runs: int, tag: str) -> dict[str, Any]:
    folder = HERE.parent / "verifier"
    limits = AgentSandboxLimits()
    files = read_seed(
        folder, max_files=MAX_SEED_FILES, max_bytes=limits.workspace_bytes, max_file_bytes=limits.file_size_bytes
    )
    with_seed, without = [], []
    for _ in range(max(3, runs // 4)):
        t = time.perf_counter()
        box = DockerSandbox(image=tag, idle_timeout_s=IDLE_S, seed_from=folder)
        with_seed.append(time.perf_counter() - t)
        box.close()
        t = time.perf_counter()
        box = DockerSandbox(image=tag, idle_timeout_s=IDLE_S)
        without.append(time.perf_counter() - t)
        box.close()
    return {
        "seed": {"folder": "verifier/", "files": len(files), "bytes": sum(len(d) for _, d in files)},
        "lasting start with seed_from": stats(with_seed),
        "lasting start without": stats(without),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    client = connect()
    build(client)
    client.close()
    tag = image_tag()
    report: dict[str, Any] = {
        "what": "lasting agent sandbox (idle_timeout_s) against a fleeting one, p50 of interleaved runs",
        "runs": args.runs,
        "host": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "image": tag,
        "sessions": sessions(args.runs, tag),
        "commands": commands(args.runs, tag),
        "seeding": seeding(args.runs, tag),
    }
    out = HERE / "results" / f"agent-sandbox-lasting-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {out.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
