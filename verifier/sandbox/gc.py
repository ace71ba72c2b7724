"""Who owns a sandbox container, and removal of those whose owner is gone.

Every container carries its owner's host name, pid and the pid's start time (ticks since
boot), so a pid the kernel reused for another process does not hide an orphan.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

import docker
import docker.errors

from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_OWNER_START


def process_start(pid: int) -> str:
    """The start time of process `pid` in clock ticks since boot ('' when it does not exist)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_labels(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Labels naming this process as the owner of a container."""
    pid = os.getpid()
    labels = {
        LABEL_MANAGED: "1",
        LABEL_OWNER_PID: str(pid),
        LABEL_OWNER_START: process_start(pid),
        LABEL_OWNER_HOST: socket.gethostname(),
    }
    labels.update(extra or {})
    return labels


def owner_alive(labels: Mapping[str, str]) -> bool:
    """Whether the process that made a container (on this host) still runs."""
    try:
        pid = int(labels.get(LABEL_OWNER_PID, "0"))
    except ValueError:
        return False
    if not pid_alive(pid):
        return False
    start = labels.get(LABEL_OWNER_START)
    return start is None or start == process_start(pid)  # containers of older versions carry no start


def collect(client: docker.DockerClient, *, everything: bool = False) -> list[str]:
    """Remove our containers whose owner process is gone (all of ours with everything=True).

    A container owned by another host is left alone unless everything=True.
    """
    from verifier.sandbox.container import remove

    removed: list[str] = []
    host = socket.gethostname()
    for c in client.api.containers(all=True, filters={"label": LABEL_MANAGED}):
        labels = c.get("Labels") or {}
        orphan = labels.get(LABEL_OWNER_HOST) == host and not owner_alive(labels)
        if (everything or orphan) and remove(client.api, c["Id"]):
            removed.append(c["Id"])
    return removed
