"""What a fresh container costs the machine, piece by piece (issue 37 section 1).

The `fresh` policy runs every candidate in a container no earlier candidate touched, so each
sample pays the engine's own work for one container (create, attach, start, stop, remove) and
the runner's start in it. This measures both in CPU time of the whole machine (`/proc/stat`:
every process, the engine's and the kernel's included), containers made one after another:

    engine       a container of our hardening running `sh -c 'sleep 0.02'`, attached, started,
                 waited for, removed: the engine's cost of one container, with next to nothing in it
    ...variants  the same with one part of the hardening left out (to see what each costs;
                 never how we run): Docker's seccomp profile, the IPC sysctls, the tmpfs mounts
    by force     a running container removed by force (what a pool did when a fresh container's
                 runner had not yet ended), against one that ended by itself first
    restarted    one container started again after each end (create and remove once): what a
                 policy that counted a restarted container as fresh would pay (not fresh: an
                 earlier candidate ran in it; a decision for the issue, never how we run)
    crun         the engine row under crun instead of runc, when the engine has a runtime of
                 that name (the same OCI walls, a C runtime instead of Go's; skipped otherwise)
    runner       our runner started in it (`protocol.launch_command(1)`, nothing preloaded) until
                 READY: the container's own CPU (its cgroup), then the bare interpreter for
                 comparison (`python3 -I -B -c pass`)

    python bench/fresh_cost.py [--n 20]

Writes bench/results/fresh-cost-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import result_file  # noqa: E402
from bench.humaneval_speed import busy_s  # noqa: E402
from verifier.limits import Limits  # noqa: E402
from verifier.runner.protocol import launch_command  # noqa: E402
from verifier.sandbox.backend import SandboxJob  # noqa: E402
from verifier.sandbox.container import Container, connect  # noqa: E402
from verifier.sandbox.gc import owner_labels  # noqa: E402
from verifier.sandbox.hardening import container_kwargs  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

Kwargs = dict[str, Any]


def lifecycle(
    api: Any, image: str, command: list[str], change: Callable[[Kwargs], None], n: int, *, force: bool
) -> dict[str, float]:
    """n containers one after another: the mean wall time and machine CPU time a container."""
    job = SandboxJob(image=image, command=tuple(command), limits=Limits(), mode="launcher")
    made = container_kwargs(job, owner_labels({"org.verifier.bench": "fresh-cost"}))
    change(made)
    wall0, busy0 = time.monotonic(), busy_s()
    for _ in range(n):
        kwargs = copy.deepcopy(made)
        host_config = api.create_host_config(**kwargs.pop("host_config"))
        cid = api.create_container(image, command=command, host_config=host_config, **kwargs)["Id"]
        sock = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        api.start(cid)
        if not force:
            api.wait(cid)
        sock.close()
        api.remove_container(cid, force=True, v=True)
    return {"wall_s": round((time.monotonic() - wall0) / n, 4), "machine_cpu_s": round((busy_s() - busy0) / n, 4)}


def restarted(api: Any, image: str, command: list[str], n: int) -> dict[str, float]:
    """One container of our hardening started n times, each run to its end: the mean wall time
    and machine CPU time a start (its create and remove once, outside the clock)."""
    job = SandboxJob(image=image, command=tuple(command), limits=Limits(), mode="launcher")
    kwargs = container_kwargs(job, owner_labels({"org.verifier.bench": "fresh-cost"}))
    host_config = api.create_host_config(**kwargs.pop("host_config"))
    cid = api.create_container(image, command=command, host_config=host_config, **kwargs)["Id"]
    try:
        wall0, busy0 = time.monotonic(), busy_s()
        for _ in range(n):
            sock = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            api.start(cid)
            api.wait(cid)
            sock.close()
        return {"wall_s": round((time.monotonic() - wall0) / n, 4), "machine_cpu_s": round((busy_s() - busy0) / n, 4)}
    finally:
        api.remove_container(cid, force=True, v=True)


def _keep(kwargs: Kwargs) -> None:
    pass


def _crun(kwargs: Kwargs) -> None:
    kwargs["host_config"]["runtime"] = "crun"


def _no_seccomp(kwargs: Kwargs) -> None:
    kwargs["host_config"]["security_opt"] = ["no-new-privileges", "seccomp=unconfined"]


def _no_sysctls(kwargs: Kwargs) -> None:
    kwargs["host_config"].pop("sysctls")


def _no_tmpfs(kwargs: Kwargs) -> None:
    kwargs["host_config"].pop("tmpfs")


def cgroup_cpu_s(cid: str) -> float | None:
    for root in ("/sys/fs/cgroup/cpuacct/docker", "/sys/fs/cgroup/cpu,cpuacct/docker"):
        path = Path(root) / cid / "cpuacct.usage"
        if path.exists():
            return int(path.read_text()) / 1e9
    return None


def runner_start(api: Any, image: str, command: list[str], n: int) -> dict[str, float | None]:
    """Our container until its READY line (or, for a command without one, its first 0.3 s):
    wall from start to READY, and the container's own CPU then (runc's init in it included)."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(n):
        warm = Container.start(
            api,
            image_id=image,
            command=command,
            limits=Limits(),
            mode="launcher",
            labels=owner_labels({"org.verifier.bench": "fresh-cost"}),
            cap=1 << 20,
            prefix="verifier-bench",
        )
        try:
            started = time.monotonic()
            warm.wait_ready(30)
            walls.append(time.monotonic() - started)
            time.sleep(0.3)
            cpu = cgroup_cpu_s(warm.cid)
            if cpu is not None:
                cpus.append(cpu)
        finally:
            warm.remove()
    return {
        "ready_wall_s": round(statistics.median(walls), 4),
        "container_cpu_s": round(statistics.median(cpus), 4) if cpus else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20)
    args = parser.parse_args()
    client = connect()
    build(client)
    api = client.api
    image = api.inspect_image(image_tag())["Id"]
    sleeper = ["sh", "-c", "sleep 0.02"]
    out: dict[str, Any] = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "n": args.n}
    out["load_1min_at_start"] = round(os.getloadavg()[0], 2)
    engine: dict[str, Any] = {}
    variants: list[tuple[str, Callable[[Kwargs], None]]] = [
        ("engine", _keep),
        ("without Docker's seccomp profile", _no_seccomp),
        ("without the IPC sysctls", _no_sysctls),
        ("without the tmpfs mounts", _no_tmpfs),
    ]
    if "crun" in (api.info().get("Runtimes") or {}):
        variants.append(("under crun instead of runc", _crun))
    else:
        print("the engine has no runtime named crun: its row is skipped", file=sys.stderr)
    for round_ in range(2):  # twice, interleaved, so the machine's drift falls on each alike
        for name, change in variants:
            engine.setdefault(name, []).append(lifecycle(api, image, sleeper, change, args.n, force=False))
        engine.setdefault("one container started again after each end (not fresh)", []).append(
            restarted(api, image, sleeper, args.n)
        )
        engine.setdefault("ended by itself, then removed", []).append(
            lifecycle(api, image, sleeper, _keep, args.n, force=False)
        )
        engine.setdefault("running, removed by force", []).append(
            lifecycle(api, image, ["sh", "-c", "sleep 5"], _keep, args.n, force=True)
        )
        print(round_, json.dumps(engine), file=sys.stderr, flush=True)
    out["lifecycle"] = engine
    out["runner"] = {
        "our runner (launch_command(1), nothing preloaded)": runner_start(api, image, launch_command(1, ""), args.n),
        "bare interpreter (python3 -I -B, prints READY)": runner_start(
            api,
            image,
            ["python3", "-I", "-B", "-c", "print('VERIFIER-READY', flush=True); import time; time.sleep(1)"],
            args.n,
        ),
    }
    out["load_1min_at_end"] = round(os.getloadavg()[0], 2)
    result_file.write("fresh-cost", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
