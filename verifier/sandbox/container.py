"""The engine's one home: the one module that imports the Docker SDK (with `hardening`'s create
argument types) and turns the engine's errors into ours.

Connecting (`connect`), creating, attaching and starting a container (`launch`; a name that is
taken is `NameTaken`, and that container is left alone), killing and removing one (`kill`,
`remove`), reading a container's or an image's record (`container_record`, `inspect_image`,
`image_id`), removing a volume (`remove_volume`: a lasting agent sandbox's workspace), a process
in a running container (`exec_start`, `exec_run`, `exec_state`: the agent's sandbox) and, for
every other request of the engine, `translated`: the engine's errors become `EngineError`
(a `SandboxUnavailable`), chained. Nothing else catches the SDK's exceptions
(`tests/sandbox/test_engine_home.py` holds every module to that).

`Container` is one sandbox container on the SDK: created locked down, attached, started, read,
killed and removed. The one place both backends (cold `DockerBackend`, warm `WarmPool`) and the
agent's sandbox (`DockerSandbox`) make containers, so all enforce the same limits the same way.

Output arrives over one attach socket (stdin, stdout and stderr multiplexed). A reader thread
keeps a bounded amount of it, recognises the runner's READY and result lines, and reports
when the output cap is passed, so the owner can kill the container.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeAlias

import docker
import docker.errors
import requests.exceptions

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.limits import Limits
from verifier.runner.clock import starved_now
from verifier.runner.protocol import PROGRESS_PREFIX, READY, RESULT_PREFIX
from verifier.sandbox import runtime
from verifier.sandbox.attach import STDERR, Stream, pieces
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.hardening import container_kwargs

#: Errors of the engine or of the connection to it: caught in this module only.
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
#: A client of the engine (made by `connect`).
Client: TypeAlias = docker.DockerClient
#: How long removal keeps trying while the engine is away (restarting, overloaded).
REMOVE_BUDGET_S = 30.0
#: A container whose main process was killed by SIGKILL exits with this code.
SIGKILL_EXIT = 128 + 9
#: How long a container that ended by a SIGKILL we did not send waits for the engine's OOM
#: event to arrive (see Container.oom_killed); paid only on that path.
OOM_EVENT_WAIT_S = 10.0


def _unix_time(rfc3339: str) -> str:
    """The engine's RFC 3339 time (nanoseconds, "Z") as the unix time its event filters take,
    a second early; "0" (the log's start) when it cannot be read."""
    match = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$", rfc3339)
    if match is None:
        return "0"
    stamp = datetime.fromisoformat(match.group(1) + match.group(2).replace("Z", "+00:00"))
    return str(max(0, int(stamp.timestamp()) - 1))


class EngineError(SandboxUnavailable):
    """The engine, or the connection to it, failed a request (`translated`); chained to the
    engine's own error, whose words it carries."""


@contextmanager
def translated(what: str = "") -> Iterator[None]:
    """The engine's errors inside the block become `EngineError` ("what: the engine's words",
    or the engine's words alone); every other exception passes unchanged."""
    try:
        yield
    except ENGINE_ERRORS as exc:
        raise EngineError(f"{what}: {exc}" if what else str(exc)) from exc


def connect() -> Client:
    """A client for the local engine, or `SandboxUnavailable` with a readable reason."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except ENGINE_ERRORS as exc:
        raise SandboxUnavailable(
            f"the Docker engine is not answering ({exc.__class__.__name__}); "
            "start it, e.g. with scripts/ensure-docker.sh"
        ) from exc
    return client


def close(client: Client) -> None:
    """Close a client; an engine that is already gone is no error."""
    try:
        client.close()
    except ENGINE_ERRORS:
        pass


def inspect_image(api: Any, ref: str) -> dict[str, Any] | None:
    """The engine's record of image `ref`, None when it has no such image. Raises EngineError."""
    with translated():
        try:
            return dict(api.inspect_image(ref))
        except docker.errors.ImageNotFound:
            return None


def image_id(api: Any, ref: str) -> str:
    """The id of the sandbox image `ref`. Raises ImageNotFound (not built) or SandboxUnavailable."""
    with translated(f"cannot inspect image {ref!r}"):
        try:
            return str(api.inspect_image(ref)["Id"])
        except docker.errors.NotFound as exc:
            raise ImageNotFound(f"sandbox image {ref!r} is not built; run `verifier image build`") from exc


def remove_image(api: Any, ref: str) -> bool:
    """Remove image `ref`; False when the engine refused (in use by a container, or already gone)."""
    try:
        api.remove_image(ref)
    except docker.errors.APIError:
        return False
    return True


class NameTaken(SandboxUnavailable):
    """`launch` found a container of that name already there (another process made it first);
    nothing was created, and nothing was removed."""


def engine_host_config(api: Any, host_config: Mapping[str, Any]) -> dict[str, Any]:
    """`hardening`'s host_config in the engine's own form (what `launch` sends, and what the
    engine's record of the container then says): to compare a container's actual configuration
    with the one it is made with. No request to the engine."""
    return dict(api.create_host_config(**host_config))


def _create(api: Any, name: str, image_id: str, command: Sequence[str], kwargs: dict[str, Any]) -> str:
    host_config = api.create_host_config(**kwargs.pop("host_config"))
    try:
        made = api.create_container(image_id, command=list(command), name=name, host_config=host_config, **kwargs)
    except docker.errors.APIError as exc:
        if exc.status_code == 409:  # the name is taken: that container is someone else's
            raise NameTaken(f"a container named {name} already exists") from exc
        raise
    return str(made["Id"])


def launch(
    api: Any,
    *,
    name: str,
    image_id: str,
    command: Sequence[str],
    kwargs: dict[str, Any],
    attach: Mapping[str, int] | None,
    attached: Callable[[str, Any], None],
    what: str = "the sandbox",
    limits: Limits | None = None,
) -> str:
    """Create container `name` (`kwargs`: `hardening.container_kwargs`, host_config included),
    attach to it (`attach`: the streams; None: no attach socket, `attached` gets None), hand the
    id and the attach socket to `attached` before the container starts, and start it; returns its id.

    Leaves nothing behind: on any failure (Ctrl-C too) the container is removed by name, and the
    engine's error becomes SandboxUnavailable ("`what` could not start"); with `limits`, an
    engine that lacks the runtime they ask for says so instead (`RuntimeNotRegistered`). A name
    that is already taken raises `NameTaken` and removes nothing (the container is not ours).
    """
    try:
        cid = _create(api, name, image_id, command, kwargs)
        attached(cid, api.attach_socket(cid, params=dict(attach)) if attach is not None else None)
        api.start(cid)
    except NameTaken:
        raise
    except BaseException as exc:
        # By name: also when Ctrl-C arrived while the engine was still creating it.
        remove(api, name)
        if isinstance(exc, ENGINE_ERRORS):
            if limits is not None:
                try:  # the clearer reason, when the engine lacks the runtime the limits ask for
                    runtime.require(api, limits)
                except ENGINE_ERRORS:
                    pass  # the engine is away: the create's own error says so
            raise SandboxUnavailable(f"{what} could not start: {exc}") from exc
        raise
    return cid


def kill(api: Any, cid: str) -> None:
    """Kill a container; one that is already gone (or an engine that is away) is no error."""
    try:
        api.kill(cid)
    except ENGINE_ERRORS:
        pass


def remove(api: Any, name: str, budget_s: float = REMOVE_BUDGET_S) -> bool:
    """Remove a container by name or id, retrying while the engine is away; survives Ctrl-C
    arriving during the removal itself. True when it is gone."""
    deadline = time.monotonic() + budget_s
    pause = 0.1
    while True:
        try:
            api.remove_container(name, force=True, v=True)
            return True
        except docker.errors.NotFound:
            return True
        except KeyboardInterrupt:
            continue
        except ENGINE_ERRORS:
            if time.monotonic() > deadline:
                return False  # `verifier gc` removes it once this process is gone
            time.sleep(pause)
            pause = min(pause * 2, 2.0)


def container_record(api: Any, name: str) -> dict[str, Any] | None:
    """The engine's record of container `name` (a name or an id), None when there is none.
    Raises EngineError."""
    with translated(f"cannot inspect container {name!r}"):
        try:
            return dict(api.inspect_container(name))
        except docker.errors.NotFound:
            return None


def exec_start(
    api: Any, container: str, argv: Sequence[str], *, user: str, workdir: str, stdin: bool
) -> tuple[str, Any]:
    """Start process `argv` in running container `container` through the engine's exec API, as
    `user` in `workdir` (`stdin`: with a stdin to write): (its exec id, the SDK's socket of its
    streams, for `attach.Stream`). Raises EngineError."""
    with translated(f"cannot start a process in {container}"):
        exec_id = str(api.exec_create(container, list(argv), stdin=stdin, user=user, workdir=workdir)["Id"])
        return exec_id, api.exec_start(exec_id, socket=True)


def exec_run(api: Any, container: str, argv: Sequence[str], *, user: str) -> None:
    """Run process `argv` in running container `container` as `user` to its end (its output is
    dropped). Raises EngineError."""
    with translated(f"cannot run a process in {container}"):
        exec_id = api.exec_create(container, list(argv), user=user)["Id"]
        api.exec_start(exec_id)


def exec_state(api: Any, exec_id: str) -> tuple[bool, int | None]:
    """(still running, exit code or None) of exec `exec_id`. Raises EngineError."""
    with translated(f"cannot inspect exec {exec_id}"):
        state = api.exec_inspect(exec_id)
    code = state.get("ExitCode")
    return bool(state.get("Running")), None if code is None else int(code)


def remove_volume(api: Any, name: str, budget_s: float = REMOVE_BUDGET_S) -> bool:
    """Remove volume `name`, retrying while the engine is away. True when it is gone; False
    when the engine refused (a container still uses it) or stayed away past the budget."""
    deadline = time.monotonic() + budget_s
    while True:
        try:
            api.remove_volume(name, force=False)
            return True
        except docker.errors.NotFound:
            return True
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # in use
                return False
            if time.monotonic() > deadline:
                return False
        except KeyboardInterrupt:
            continue
        except ENGINE_ERRORS:
            if time.monotonic() > deadline:
                return False
        time.sleep(0.2)


class Container:
    """A started sandbox container and what it has written so far."""

    def __init__(self, api: Any, name: str, cid: str, stream: Stream, image_id: str, cap: int) -> None:
        self.api, self.name, self.cid, self.image_id = api, name, cid, image_id
        self.stream = stream
        self.sock = stream.sock
        self.cond = threading.Condition()
        self.ready = False
        self.eof = False
        self.uses = 0
        self.created = time.monotonic()
        self.cap = cap
        self.out = bytearray()
        self.err = bytearray()
        self.result: bytes | None = None
        #: Who hears the job's progress lines (`SandboxJob.progress`); None: they are dropped.
        self.on_progress: Callable[[bytes], None] | None = None
        self.limited = False
        #: Why we killed it: "output" (it wrote past its cap) or "timeout"; None: we did not.
        self.killed_for: str | None = None
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"sandbox-{name}")

    @classmethod
    def start(
        cls,
        api: Any,
        *,
        image_id: str,
        command: Sequence[str],
        limits: Limits,
        mode: str,
        labels: Mapping[str, str],
        cap: int,
        prefix: str = "verifier",
    ) -> Container:
        """Create, attach and start a container (`launch`). Raises SandboxUnavailable; leaves
        nothing behind."""
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        job = SandboxJob(image=image_id, command=tuple(command), limits=limits, mode=mode)  # type: ignore[arg-type]
        made: list[Container] = []

        def attached(cid: str, raw: Any) -> None:
            stream = Stream(raw)
            stream.sock.settimeout(None)
            container = cls(api, name, cid, stream, image_id, cap)
            made.append(container)
            container.reader.start()

        streams = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        kwargs = container_kwargs(job, labels)
        launch(
            api,
            name=name,
            image_id=image_id,
            command=command,
            kwargs=kwargs,
            attach=streams,
            attached=attached,
            limits=limits,
        )
        return made[0]

    # -- output -------------------------------------------------------------------------
    def _read(self) -> None:
        """Keep the first `cap` bytes of output; pick out the runner's marker lines whole."""
        pending = bytearray()
        for kind, data in pieces(self.sock):
            progress: list[bytes] = []
            with self.cond:
                if kind == STDERR:
                    self._keep(self.err, data)
                    continue
                pending += data
                while b"\n" in pending:
                    line, _, rest = bytes(pending).partition(b"\n")
                    pending = bytearray(rest)
                    if line == READY:
                        self.ready = True
                    elif line.startswith(RESULT_PREFIX):
                        self.result = line
                    elif line.startswith(PROGRESS_PREFIX):
                        progress.append(line)
                    else:
                        self._keep(self.out, line + b"\n")
                if len(pending) > self.cap:  # an endless line: no marker is this long
                    self._keep(self.out, bytes(pending))
                    pending.clear()
                listener = self.on_progress
                self.cond.notify_all()
            if listener is not None and progress:
                self._tell(listener, progress[-1])
        with self.cond:
            self._keep(self.out, bytes(pending))
            self.eof = True
            self.cond.notify_all()

    @staticmethod
    def _tell(listener: Callable[[bytes], None], line: bytes) -> None:
        """Outside the lock, and never fatal: a listener's failure must not stop the reading."""
        try:
            listener(line)
        except Exception:  # noqa: BLE001 - progress is a courtesy; the run goes on
            pass

    def _keep(self, buffer: bytearray, data: bytes) -> None:
        room = self.cap - len(buffer)
        buffer += data[: max(room, 0)]
        if len(data) > room:
            self._limit()

    def _limit(self) -> None:
        if not self.limited:
            self.limited = True
            # Said here, before the kill's thread runs: the owner may read why at once (a pool
            # wakes on `limited`), and a run cut for its output must never look unexplained.
            if self.killed_for is None:
                self.killed_for = "output"
            # The engine may hold a kill until the attach stream drains, so the reader must
            # keep reading while the kill is under way: never kill from its thread.
            threading.Thread(target=self.kill, args=("output",), daemon=True, name="sandbox-kill").start()

    def reset_output(self, cap: int, on_progress: Callable[[bytes], None] | None = None) -> None:
        """Start afresh for the next job (its output cap and who hears its progress)."""
        with self.cond:
            self.out, self.err, self.result, self.limited, self.cap = bytearray(), bytearray(), None, False, cap
            self.on_progress = on_progress

    def output(self) -> tuple[bytes, bytes, bytes | None, bool, bool]:
        """(stdout, stderr, result line, output limited, ended)."""
        with self.cond:
            return bytes(self.out), bytes(self.err), self.result, self.limited, self.eof

    # -- input and waiting --------------------------------------------------------------
    def send(self, data: bytes, *, close: bool = False) -> bool:
        """Write to the container's stdin; False when it is gone (its exit says why)."""
        try:
            if data:
                self.sock.sendall(data)
            if close:
                self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            return False
        return True

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, max(0.0, timeout))

    def wait_ready(self, timeout: float) -> bool:
        self.wait_for(lambda: self.ready or self.eof, timeout)
        return self.ready and not self.eof

    def take_ready(self, timeout: float) -> bool:
        """Wait for READY (the runner is idle: started, or reset after its last job) and consume
        it, so that the next wait is for the READY after the next job."""
        with self.cond:
            self.cond.wait_for(lambda: self.ready or self.eof, max(0.0, timeout))
            ready, self.ready = self.ready and not self.eof, False
        return ready

    def wait_exit(self, deadline: float) -> int | None:
        """The exit code, or None when the deadline passed first."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            return int(self.api.wait(self.cid, timeout=remaining)["StatusCode"])
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            return None

    # -- the end ------------------------------------------------------------------------
    def kill(self, reason: str = "timeout") -> None:
        if self.killed_for is None:
            self.killed_for = reason
        kill(self.api, self.cid)

    def cpu_s(self) -> float | None:
        """CPU time the container has used so far, from the engine (None when unknown)."""
        try:
            stats = self.api.stats(self.cid, stream=False, one_shot=True)
            return int(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9
        except (*ENGINE_ERRORS, KeyError, TypeError, ValueError):
            return None

    def starved(self, cpus: float) -> bool:
        """Whether the machine is too busy to give this container its CPU right now (see
        verifier.runner.clock.starved_now); asked only when the host is about to kill it."""
        if os.environ.get("DOCKER_HOST", "unix://").startswith(("tcp:", "ssh:")):
            return False  # a remote engine's machine is not this one: no fair way to tell
        return starved_now(self.cpu_s, cpus)

    def oom_killed(self, event_wait_s: float = OOM_EVENT_WAIT_S) -> bool:
        """Whether the kernel killed a process of this container for memory, in the engine's word.

        `State.OOMKilled` alone is not that word: the engine sets it only when the OOM event
        reached it before the exit event, and the two come from different parts of the shim.
        Under gVisor the kernel's OOM killer kills the sandbox's own process (its Sentry, which
        holds every sandboxed process's memory), so the whole container ends with 137, and on a
        busy host its OOM event often comes after its exit: OOMKilled stays false although the
        engine reports an "oom" event for the container a moment later. So a container that
        ended by SIGKILL (137) that we did not send is asked about once more: the engine's
        event log is searched for this container's "oom" event, waiting up to `event_wait_s` for
        it (only on this path; every other run is judged from OOMKilled alone).
        """
        try:
            info = self.api.inspect_container(self.cid)
            state = info["State"]
            if state.get("OOMKilled"):
                return True
            if self.killed_for is not None:
                return False  # ours: its own reason stands
            if state.get("Running") and self.eof:  # the attach stream ended before the engine's record
                self.wait_exit(time.monotonic() + event_wait_s)
                info = self.api.inspect_container(self.cid)
                state = info["State"]
                if state.get("OOMKilled"):
                    return True
            if state.get("Running") or state.get("ExitCode") != SIGKILL_EXIT:
                return False
            return self._oom_event(str(info.get("Created") or ""), event_wait_s)
        except ENGINE_ERRORS:
            return False

    def _oom_event(self, created: str, wait_s: float) -> bool:
        """Whether the engine's event log has an "oom" event of this container (since `created`,
        the engine's own RFC 3339 time), waiting up to `wait_s` for one to arrive."""
        stream = self.api.events(
            since=_unix_time(created), filters={"container": self.cid, "event": "oom"}, decode=True
        )
        timer = threading.Timer(wait_s, stream.close)
        timer.daemon = True
        timer.start()
        try:
            return any(event.get("Action", event.get("status")) == "oom" for event in stream)
        except (*ENGINE_ERRORS, OSError, ValueError, AttributeError):
            return False  # the stream was closed under us: no oom event within the wait
        finally:
            timer.cancel()
            stream.close()

    def remove(self) -> bool:
        self.stream.close()
        return remove(self.api, self.name)
