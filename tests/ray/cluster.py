"""A real Ray cluster on this machine for the tests: a head and extra nodes, each a `ray start --block`
in a session of its own, on a free port and a temp dir of its own, so it never joins another
cluster and stopping it ends exactly the processes it started (never `ray stop`).

Every node is started with --node-ip-address=127.0.0.1; Ray then advertises this machine's own
interface address, so all cluster traffic stays on this machine.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return int(fields[3])  # state, ppid, pgrp, session


def processes_in_session(sid: int) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and session_of(int(p)) == sid]


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


#: How long a node may take to start and join: a bound against hangs, not a speed (on a busy
#: machine, two CPU hogs and a test run beside it, Ray's processes take minutes to come up).
NODE_START_S = 300.0


@dataclass
class RayNode:
    name: str
    temp_dir: Path
    proc: subprocess.Popen[bytes]

    def raylet_pid(self) -> int:
        for pid in processes_in_session(self.proc.pid):
            if comm(pid) == "raylet":
                return pid
        raise LookupError(f"no raylet in node {self.name}")

    def processes(self) -> list[int]:
        return processes_in_session(self.proc.pid)


class LocalRayCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[RayNode] = []

    def _start(self, name: str, args: list[str], num_cpus: int, resources: str | None) -> RayNode:
        # A folder of its own (a second node of the same name, one test after another, gets name2).
        temp, k = self.root / name, 1
        while temp.exists():
            k += 1
            temp = self.root / f"{name}{k}"
        temp.mkdir(parents=True)
        cmd = [
            RAY,
            "start",
            "--block",
            f"--temp-dir={temp}",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={num_cpus}",
            "--disable-usage-stats",
            *args,
        ]
        if resources:
            cmd.append(f"--resources={resources}")
        log = open(temp / "ray-start.log", "wb")  # noqa: SIM115 - lives as long as the node
        proc = subprocess.Popen(cmd, env=ENV, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        node = RayNode(name, temp, proc)
        self.nodes.append(node)
        deadline = time.monotonic() + NODE_START_S
        while not list(temp.glob("session_*/sockets/raylet")):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray node {name} did not start:\n{(temp / 'ray-start.log').read_text()[-3000:]}")
            time.sleep(0.2)
        return node

    def start_head(self, num_cpus: int = 1, resources: str | None = None) -> RayNode:
        args = [
            "--head",
            f"--port={self.port}",
            "--include-dashboard=false",
            f"--dashboard-port={free_port()}",
        ]
        return self._start("head", args, num_cpus, resources)

    def add_node(self, name: str, num_cpus: int = 1, resources: str | None = None) -> RayNode:
        return self._start(name, [f"--address={self.address}"], num_cpus, resources)

    def kill_raylet(self, node: RayNode) -> None:
        """What a node failure looks like: its raylet killed."""
        os.kill(node.raylet_pid(), signal.SIGKILL)

    def stop_node(self, node: RayNode) -> None:
        """End every process of this node's session (the raylet's workers included)."""
        for _ in range(50):
            pids = node.processes()
            if node.proc.poll() is None:
                pids.append(node.proc.pid)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        node.proc.wait(timeout=30)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            self.stop_node(node)
        self.nodes.clear()


def ray_node_id(node: RayNode) -> str:
    """The Ray node id of `node` (this process must be connected to the cluster)."""
    import ray

    for entry in ray.nodes():
        if entry.get("Alive") and str(entry.get("RayletSocketName", "")).startswith(str(node.temp_dir)):
            return str(entry["NodeID"])
    raise LookupError(f"node {node.name} is not in the cluster")
