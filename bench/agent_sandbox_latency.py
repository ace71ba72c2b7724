"""Cost of the agent's sandbox (DockerSandbox) against doing the same by hand with the docker CLI.

- session start: `DockerSandbox()` (create, attach, start; hardened, tmpfs workspace) and its
  `close()`, against `docker run -d` with the same hardening flags and `docker rm -f`;
- one `execute` of `echo hi`: `DockerSandbox.execute` against `docker exec CONTAINER bash -c`
  (CLI) and a bare docker-py exec (exec_create + exec_start), in the same container;
- `execute` of a short Python command, and a small file's upload and download;
- the timeout's margin: how long after its 1 s timeout `sleep 60` comes back (killed).

p50 over N runs each (20 by default), interleaved so load on the shared machine hits all alike.

    python bench/agent_sandbox_latency.py [--runs 20]

Writes bench/results/agent-sandbox-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier.agents.sandbox.box import AGENT_UID, DockerSandbox  # noqa: E402
from verifier.sandbox.attach import pieces  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

#: `docker run` flags equivalent to the sandbox's create arguments (the fair manual baseline).
HARDENED = [
    "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=64m,mode=1777",
    "--tmpfs", f"/workspace:rw,nosuid,nodev,size=256m,uid={AGENT_UID},gid={AGENT_UID},mode=0755",
    "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--pids-limit", "256", "--memory", "1g",
    "--memory-swap", "1g", "--cpus", "1", "--init", "--user", "65534:65534", "--workdir", "/workspace",
    "--log-driver", "none",
]  # fmt: skip


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_s": round(statistics.median(ordered), 4),
        "p90_s": round(ordered[int(0.9 * (len(ordered) - 1))], 4),
        "min_s": round(ordered[0], 4),
        "max_s": round(ordered[-1], 4),
    }


def timed(action: Callable[[], object]) -> float:
    t = time.perf_counter()
    action()
    return time.perf_counter() - t


def cli(*args: str) -> str:
    return subprocess.run(["docker", *args], check=True, capture_output=True, text=True).stdout


def session_start(runs: int, tag: str) -> dict[str, Any]:
    ours_start, ours_close, cli_start, cli_close = [], [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        sandbox = DockerSandbox(image=tag)
        ours_start.append(time.perf_counter() - t)
        ours_close.append(timed(sandbox.close))
        name = f"bench-agent-cli-{uuid.uuid4().hex[:8]}"
        cli_start.append(timed(lambda n=name: cli("run", "-d", "--name", n, *HARDENED, tag, "sleep", "infinity")))
        cli_close.append(timed(lambda n=name: cli("rm", "-f", n)))
    return {
        "DockerSandbox()": stats(ours_start),
        "DockerSandbox.close()": stats(ours_close),
        "docker run -d (CLI, same flags)": stats(cli_start),
        "docker rm -f (CLI)": stats(cli_close),
    }


def commands(runs: int, tag: str) -> dict[str, Any]:
    client = connect()
    rows: dict[str, list[float]] = {
        "DockerSandbox.execute('echo hi')": [],
        "docker exec bash -c 'echo hi' (CLI)": [],
        "docker-py exec_create+exec_start 'echo hi'": [],
        "DockerSandbox.execute(python3 -c print(1))": [],
        "docker exec python3 -c print(1) (CLI)": [],
        "upload_files 1 KiB": [],
        "download_files 1 KiB": [],
    }
    with DockerSandbox(image=tag) as sandbox:
        user = f"{AGENT_UID}:{AGENT_UID}"

        def by_sdk() -> None:
            exec_id = client.api.exec_create(sandbox.id, ["bash", "-c", "echo hi"], user=user)["Id"]
            raw = client.api.exec_start(exec_id, socket=True)
            sock = getattr(raw, "_sock", raw)
            for _ in pieces(sock):
                pass
            sock.close()
            client.api.exec_inspect(exec_id)

        sandbox.execute("true")  # warm both paths once
        cli("exec", "-u", user, sandbox.id, "true")
        blob = os.urandom(1024)
        for _ in range(runs):
            rows["DockerSandbox.execute('echo hi')"].append(timed(lambda: sandbox.execute("echo hi")))
            rows["docker exec bash -c 'echo hi' (CLI)"].append(
                timed(lambda: cli("exec", "-u", user, "-w", "/workspace", sandbox.id, "bash", "-c", "echo hi"))
            )
            rows["docker-py exec_create+exec_start 'echo hi'"].append(timed(by_sdk))
            rows["DockerSandbox.execute(python3 -c print(1))"].append(
                timed(lambda: sandbox.execute("python3 -c 'print(1)'"))
            )
            rows["docker exec python3 -c print(1) (CLI)"].append(
                timed(lambda: cli("exec", "-u", user, sandbox.id, "python3", "-c", "print(1)"))
            )
            rows["upload_files 1 KiB"].append(timed(lambda: sandbox.upload_files([("/workspace/b.bin", blob)])))
            rows["download_files 1 KiB"].append(timed(lambda: sandbox.download_files(["/workspace/b.bin"])))
        margins = []
        for _ in range(5):
            t = time.perf_counter()
            done = sandbox.execute("sleep 60", timeout=1)
            assert done.exit_code == 124, done
            margins.append(time.perf_counter() - t - 1.0)
    client.close()
    report: dict[str, Any] = {name: stats(values) for name, values in rows.items()}
    report["timeout 1 s: seconds past the timeout until sleep 60 is back, killed"] = stats(margins)
    ours, by_hand = report["DockerSandbox.execute('echo hi')"], report["docker exec bash -c 'echo hi' (CLI)"]
    report["ratio execute / docker exec CLI (p50)"] = round(ours["p50_s"] / by_hand["p50_s"], 3)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    client = connect()
    build(client)
    client.close()
    tag = image_tag()
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "runs": args.runs,
        "session": session_start(args.runs, tag),
        "commands": commands(args.runs, tag),
    }
    out = HERE / "results" / f"agent-sandbox-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"written to {out.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
