"""Who owns a sandbox container, and the one sweep of containers by label.

Every container carries its owner's host name, pid and the pid's start time (ticks since
boot), so a pid the kernel reused for another process does not hide an orphan.

Every removal (or kill) of containers found by their labels is `sweep_once` here: `collect`
(`verifier gc`: orphans), and through `sweep`, the one loop that retries while the engine is
away, a pool's close (its pool label), a Ray node's lifeline (its dead owner) and a review's
Ctrl-C (kills its runs).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verifier.errors import SandboxUnavailable
from verifier.sandbox.container import Client, close, connect, kill, remove, translated
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


def collect(client: Client, *, everything: bool = False) -> list[str]:
    """Remove our containers whose owner process is gone (all of ours with everything=True).

    A container owned by another host is left alone unless everything=True. One pass on
    `client`; raises SandboxUnavailable when the engine fails it.
    """
    host = socket.gethostname()

    def orphan(labels: Mapping[str, str]) -> bool:
        return labels.get(LABEL_OWNER_HOST) == host and not owner_alive(labels)

    return sweep_once(client.api, (), select=None if everything else orphan)


def sweep_once(
    api: Any,
    labels: Sequence[str],
    *,
    select: Callable[[Mapping[str, str]], bool] | None = None,
    kill_only: bool = False,
) -> list[str]:
    """Remove every container of ours that carries `labels` (each "key" or "key=value") and
    that `select` (given its labels) picks; with kill_only, kill the running ones instead.
    Returns the ids removed (killed). Raises SandboxUnavailable when the engine fails the listing."""
    filters = {"label": [LABEL_MANAGED, *labels]}
    with translated():
        found = api.containers(all=not kill_only, filters=filters)
    done: list[str] = []
    for c in found:
        if select is not None and not select(c.get("Labels") or {}):
            continue
        if kill_only:
            kill(api, c["Id"])
            done.append(c["Id"])
        elif remove(api, c["Id"]):
            done.append(c["Id"])
    return done


def sweep(labels: Sequence[str], *, kill_only: bool = False, timeout_s: float = 0.0, pause_s: float = 0.5) -> list[str]:
    """`sweep_once` on a connection of its own, again every `pause_s` while the engine is away
    or a container is still there, until `timeout_s` has passed (one pass with kill_only).
    Never raises for the engine: `verifier gc` removes what is left once the owner is gone."""
    deadline = time.monotonic() + timeout_s
    done: list[str] = []
    while True:
        client = None
        try:
            client = connect()
            done += sweep_once(client.api, labels, kill_only=kill_only)
            if kill_only:
                return done
            with translated():
                if not client.api.containers(all=True, filters={"label": [LABEL_MANAGED, *labels]}):
                    return done
        except SandboxUnavailable:
            pass
        finally:
            if client is not None:
                close(client)
        if time.monotonic() > deadline:
            return done
        time.sleep(pause_s)
