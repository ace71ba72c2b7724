"""Who owns a sandbox container, and the one sweep of containers (and volumes) by label.

Every container carries its owner's host name, pid and the pid's start time (ticks since
boot), so a pid the kernel reused for another process does not hide an orphan. A lasting agent
sandbox (`LABEL_IDLE_TIMEOUT`) outlives its maker by design: it is an orphan once it has
stopped (it stops itself when idle), whoever made it.

Every removal (or kill) of containers found by their labels is `sweep_once` here: `collect`
(`verifier gc`: orphans), and through `sweep`, the one loop that retries while the engine is
away, a pool's close (its pool label), a Ray node's lifeline (its dead owner) and a review's
Ctrl-C (kills its runs). `collect_volumes` removes our volumes that no container uses any more
(a lasting sandbox's workspace).

Labels say whose a container claims to be, and anyone who reaches the engine can write them. So
the sweep only ever removes or kills by them, and only what has ended or whose owner is gone:
it never serves, attaches to or adopts a container (that takes the host's record,
`verifier.sandbox.provenance`), and removing a container also removes its record. A volume holds
data: it is removed only when the host's record says this verifier made it, never for its labels.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verifier.errors import SandboxUnavailable
from verifier.sandbox import provenance
from verifier.sandbox.container import Client, close, connect, kill, remove, remove_volume, translated
from verifier.sandbox.hardening import (
    LABEL_IDLE_TIMEOUT,
    LABEL_MANAGED,
    LABEL_OWNER_HOST,
    LABEL_OWNER_PID,
    LABEL_OWNER_START,
)

#: Engine states of a container whose processes have all ended.
ENDED_STATES = frozenset({"exited", "dead"})


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


def orphaned(entry: Mapping[str, Any], host: str) -> bool:
    """Whether a container of ours (its entry in the engine's listing) made on `host` is left
    behind: its owner process is gone, or, for a lasting agent sandbox, it has stopped (or its
    maker died before starting it)."""
    labels = entry.get("Labels") or {}
    if labels.get(LABEL_OWNER_HOST) != host:
        return False
    if LABEL_IDLE_TIMEOUT in labels:
        state = entry.get("State")
        return state in ENDED_STATES or (state == "created" and not owner_alive(labels))
    return not owner_alive(labels)


def collect(client: Client, *, everything: bool = False, labels: Sequence[str] = ()) -> list[str]:
    """Remove our containers that are left behind (`orphaned`; all of ours with everything=True),
    among those that carry `labels` too.

    A container made on another host is left alone unless everything=True. One pass on
    `client`; raises SandboxUnavailable when the engine fails it.
    """
    host = socket.gethostname()
    return sweep_once(client.api, labels, select=None if everything else (lambda entry: orphaned(entry, host)))


#: A volume's record younger than this may be one whose volume the engine is making right now.
VOLUME_RECORD_GRACE_S = 3600.0


def prune_records(api: Any) -> int:
    """Drop the host's records (`provenance`) of containers and volumes the engine no longer has
    (removed by hand, or by another tool): the records stay bounded. The records are read before
    the engine's listing, so a container made meanwhile keeps its record. Returns how many went.
    Raises SandboxUnavailable when the engine fails the listing or the records are not kept safely."""
    ids, volumes = provenance.recorded(min_age_s=VOLUME_RECORD_GRACE_S)
    with translated():
        present = {str(c["Id"]) for c in api.containers(all=True, quiet=True)}
        listed = api.volumes() or {}
    present_volumes = {str(v["Name"]) for v in listed.get("Volumes") or []}
    gone = [cid for cid in ids if cid not in present]
    for cid in gone:
        provenance.forget(cid)
    gone_volumes = [name for name in volumes if name not in present_volumes]
    for name in gone_volumes:
        provenance.forget_volume(name)
    return len(gone) + len(gone_volumes)


def collect_volumes(client: Client, *, labels: Sequence[str] = ()) -> list[str]:
    """Remove our volumes (those that carry `labels` too) that no container uses: the workspace
    of a lasting sandbox whose container is gone. Ours means recorded by their maker
    (`provenance.volume_made`): a volume that merely carries our labels is someone else's data.
    Then drops the records of what the engine no longer has (`prune_records`). One pass; raises
    SandboxUnavailable when the engine fails the listing."""
    with translated():
        found = client.api.volumes(filters={"label": [LABEL_MANAGED, *labels], "dangling": True})
    names = [str(v["Name"]) for v in (found or {}).get("Volumes") or []]
    removed = [name for name in names if provenance.volume_made(name) and remove_volume(client.api, name)]
    for name in removed:
        provenance.forget_volume(name)
    prune_records(client.api)
    return removed


def sweep_once(
    api: Any,
    labels: Sequence[str],
    *,
    select: Callable[[Mapping[str, Any]], bool] | None = None,
    kill_only: bool = False,
) -> list[str]:
    """Remove every container of ours that carries `labels` (each "key" or "key=value") and
    that `select` (given its entry in the engine's listing: "Labels", "State", ...) picks;
    with kill_only, kill the running ones instead.
    Returns the ids removed (killed). Raises SandboxUnavailable when the engine fails the listing."""
    filters = {"label": [LABEL_MANAGED, *labels]}
    with translated():
        found = api.containers(all=not kill_only, filters=filters)
    done: list[str] = []
    for c in found:
        if select is not None and not select(c):
            continue
        if kill_only:
            kill(api, c["Id"])
            done.append(c["Id"])
        elif remove(api, c["Id"]):
            provenance.forget(str(c["Id"]))  # a record of ours, if it was ours: never one of a live container
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
