"""Remove containers that a crashed verifier process left behind."""

from __future__ import annotations

import os
import socket

import docker
import docker.errors

from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID


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


def collect(client: docker.DockerClient, *, everything: bool = False) -> list[str]:
    """Remove our containers whose owner process is gone (all of ours with everything=True).

    A container owned by another host is left alone unless everything=True.
    """
    removed: list[str] = []
    host = socket.gethostname()
    for c in client.api.containers(all=True, filters={"label": LABEL_MANAGED}):
        labels = c.get("Labels") or {}
        try:
            pid = int(labels.get(LABEL_OWNER_PID, "0"))
        except ValueError:
            pid = 0
        same_host = labels.get(LABEL_OWNER_HOST) == host
        orphan = same_host and (not pid_alive(pid))
        if everything or orphan:
            try:
                client.api.remove_container(c["Id"], force=True, v=True)
                removed.append(c["Id"])
            except docker.errors.NotFound:
                pass
    return removed
