"""`ThreadSandboxes`: one lasting `DockerSandbox` per LangGraph thread, found again from any
process of the same user on the same host (where the record that proves it ours is kept).

The shape of Deep Agents' hosted sandbox providers (`get_or_create`, `delete`; the thread's
sandbox found by the thread, as their docs do with sandbox labels): a thread that resumes in
another worker, or after a restart, gets its own sandbox back, workspace and all, as long as
the sandbox has not ended after its idle timeout; after that it gets a fresh one.

The thread's sandbox id is derived from the thread id (and a `namespace`, so two applications
on one engine do not share sandboxes): `verifier-agent-t<digest>`. The engine refuses a second
container of one name, so two processes that ask for a new thread at once cannot make two
sandboxes: the loser attaches to the winner's. A container under a thread's id that is not
proven ours (`identity.prove`: a look-alike that copies our labels) is refused, never
served and never removed. Deep Agents 0.7 takes a backend instance, not a
factory, so build the agent for the thread's sandbox, e.g. in a LangGraph graph factory::

    sandboxes = ThreadSandboxes(idle_timeout_s=1800)

    def make_graph(config):
        return create_deep_agent(model=..., backend=sandboxes.for_config(config), checkpointer=...)
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from verifier.agents.sandbox.box import DockerSandbox
from verifier.agents.sandbox.identity import discard, prove
from verifier.agents.sandbox.lease import check_idle_timeout
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.closing import Closing
from verifier.errors import SandboxUnavailable, UnknownSandbox
from verifier.sandbox.container import NameTaken, connect, container_record
from verifier.sandbox.gc import owner_alive

#: A thread's sandbox when nobody says otherwise: half an hour without use.
DEFAULT_IDLE_S = 1800.0
#: How long get_or_create waits for a thread's sandbox another process is making (a bound
#: against a hang, not a speed: on a busy host a start can take many seconds).
START_WAIT_S = 300.0


class ThreadSandboxes(Closing):
    """Lasting sandboxes keyed by thread id: the same thread gets the same sandbox, also from
    another process, until it ends after `idle_timeout_s` without use.

    `close()` (or leaving the `with` block) lets go of this process's sandboxes without
    removing them; `delete(thread_id)` removes a thread's sandbox for good.

    Args:
        idle_timeout_s: how long a thread's sandbox lives without use.
        namespace: keeps the sandboxes of different applications on one engine apart.
        image, limits, shell: as for `DockerSandbox`, for the sandboxes this makes.
        seed_from: a host folder copied into each new thread's workspace (not on reconnect).
        client: a Docker client; one for the local engine by default (closed by `close()`).
    """

    def __init__(
        self,
        *,
        idle_timeout_s: float = DEFAULT_IDLE_S,
        namespace: str = "default",
        image: str | None = None,
        limits: AgentSandboxLimits | None = None,
        shell: str = "/bin/bash",
        seed_from: str | os.PathLike[str] | None = None,
        client: Any = None,
    ) -> None:
        self.idle_timeout_s = check_idle_timeout(idle_timeout_s)
        self.namespace = namespace
        self.image, self.limits, self.shell, self.seed_from = image, limits, shell, seed_from
        self._own_client = client is None
        self._client = client if client is not None else connect()
        self._held: dict[str, DockerSandbox] = {}
        self._lock = threading.Lock()

    def sandbox_id(self, thread_id: str) -> str:
        """The id of `thread_id`'s sandbox (whether or not it exists)."""
        if not isinstance(thread_id, str) or not thread_id:
            raise ValueError(f"thread_id must be a non-empty string, got {thread_id!r}")
        key = hashlib.sha256(f"{self.namespace}\0{thread_id}".encode()).hexdigest()[:24]
        return f"verifier-agent-t{key}"

    def get_or_create(self, thread_id: str) -> DockerSandbox:
        """The thread's live sandbox: the one this process holds, else the one on the engine
        (made by any process), else a new one. Raises ValueError for an empty thread id,
        UnknownSandbox when the thread's id is taken by a container that is not a lasting
        sandbox of ours, and SandboxUnavailable when the engine fails."""
        name = self.sandbox_id(thread_id)
        with self._lock:
            held = self._held.get(thread_id)
            if held is not None and not held.closed and self._running(held.container_id):
                return held
            deadline = time.monotonic() + START_WAIT_S
            while time.monotonic() < deadline:
                box = self._attach_or_make(name)
                if box is not None:
                    self._held[thread_id] = box
                    return box
                time.sleep(0.1)
        raise SandboxUnavailable(f"the sandbox of thread {thread_id!r} did not start within {START_WAIT_S:g} s")

    def for_config(self, config: Mapping[str, Any]) -> DockerSandbox:
        """`get_or_create` for the thread of a LangGraph config (`configurable.thread_id`)."""
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if not thread_id:
            raise ValueError("the config names no thread: set config['configurable']['thread_id']")
        return self.get_or_create(str(thread_id))

    def delete(self, thread_id: str) -> bool:
        """Remove the thread's sandbox and its workspace, whoever holds it. True when there
        was one of ours to remove."""
        name = self.sandbox_id(thread_id)
        with self._lock:
            held = self._held.pop(thread_id, None)
            if held is not None:
                held.release()
            record = container_record(self._client.api, name)
            try:
                made = prove(self._client.api, record, name)
            except UnknownSandbox:  # none, or not ours to remove (its labels prove nothing)
                return False
            discard(self._client.api, made)
            return True

    def close(self) -> None:
        """Let go of every sandbox this process holds (they live on until their idle timeout)."""
        with self._lock:
            for box in self._held.values():
                box.release()
            self._held.clear()
        if self._own_client:
            self._client.close()

    # -- inside -------------------------------------------------------------------------
    def _running(self, container_id: str) -> bool:
        record = container_record(self._client.api, container_id)
        return bool(record and (record.get("State") or {}).get("Running"))

    def _attach_or_make(self, name: str) -> DockerSandbox | None:
        """The sandbox `name`, attached or made; None when it is changing under us (try again)."""
        try:
            return DockerSandbox.attach(name, client=self._client)
        except UnknownSandbox as exc:
            if exc.why in ("ended", "starting"):  # proven ours: attach proves before it looks at the state
                record = container_record(self._client.api, name)
                labels = ((record or {}).get("Config") or {}).get("Labels") or {}
                if exc.why == "starting" and owner_alive(labels):
                    return None  # its maker is starting it: attach once it runs
                try:
                    made = prove(self._client.api, record, name)
                except UnknownSandbox as again:
                    if again.why != "missing":
                        raise
                else:  # ended, or its maker died making it: its workspace is gone
                    discard(self._client.api, made)
            elif exc.why != "missing":
                raise
        try:
            return DockerSandbox(
                image=self.image,
                limits=self.limits,
                client=self._client,
                shell=self.shell,
                idle_timeout_s=self.idle_timeout_s,
                seed_from=self.seed_from,
                name=name,
            )
        except NameTaken:  # another process made it first: attach to theirs
            return None
