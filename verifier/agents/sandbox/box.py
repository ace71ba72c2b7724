"""`DockerSandbox`: a Deep Agents sandbox backend (`BaseSandbox`) on the verifier's hardened
containers, so a working agent can run its own commands (quick tests, scripts, `python -c`)
on this machine, offline.

One long-lived container per agent session, made with the same create arguments as the
verifier's own (`verifier.sandbox.hardening.container_kwargs`): no network, read-only root,
every capability dropped, no-new-privileges, memory (no swap), CPU, pids, open-file and
file-size limits, an environment with nothing from the host. On top of that: a size-limited
tmpfs workspace (`/workspace`, owned by the agent's user) beside the tmpfs scratch `/tmp`.

Three users, so the agent cannot reach the machinery that serves it:

- the agent's commands and uploads run as `AGENT_UID` (2000, the image's own user);
- the container's init and its keep-alive run as `KEEPER_UID` (nobody), and so do downloads:
  the agent's processes can neither signal nor trace them, so a file read for the grader is
  read by a process the agent cannot tamper with.

Two lifetimes:

- **fleeting** (the default): the keep-alive reads the container's stdin, which this process
  holds open: if this process dies (even by SIGKILL) the container stops by itself, and
  `verifier gc` removes it (its owner labels name this process; `LABEL_AGENT_SANDBOX` marks it
  as an agent's sandbox). The workspace is a tmpfs of the container.
- **lasting** (`idle_timeout_s=`): the sandbox outlives its process. Another process (of the
  same user, on the same host) reconnects with `DockerSandbox.attach(sandbox_id)`
  (`ThreadSandboxes` does it per LangGraph thread), once the host's record written when it was
  made and its actual configuration prove it ours (`identity`; never its labels). The
  workspace is a named volume on a size-limited tmpfs, removed with the sandbox. The keep-alive
  is a watchdog that ends the container once nobody has used it for its idle timeout
  (`lease`), and `verifier gc` then removes container and volume. Ctrl-C or a crash
  leaves it running until then, never longer.

`seed_from=PATH` copies a host folder into a new sandbox's workspace (`seed`).

The class lives here, with its commands, its lease and its lifetime; its container is made in
`making`, its file operations (`upload_files`, `download_files`, `download_folder`) are
`transfers`'s `SandboxFiles`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from deepagents.backends.protocol import ExecuteResponse
from deepagents.backends.sandbox import BaseSandbox

from verifier.agents.sandbox.commands import BACKSTOP_S, Exec, ExecOutcome, backstop, shell_command
from verifier.agents.sandbox.files import PYTHON, Place
from verifier.agents.sandbox.identity import (
    AGENT_CPU_SHARES,
    AGENT_UID,
    FACT_IDLE,
    FACT_LIMITS,
    FACT_SHELL,
    FACT_VOLUME,
    KEEPALIVE,
    KEEPER,
    KEEPER_UID,
    LABEL_AGENT_LIMITS,
    LABEL_AGENT_SANDBOX,
    LABEL_AGENT_SHELL,
    LABEL_AGENT_VOLUME,
    WORKSPACE,
    forget_volume,
    live,
    prove,
)
from verifier.agents.sandbox.lease import LeaseClock, check_idle_timeout, renew_command
from verifier.agents.sandbox.limits import FLOOD_FACTOR, AgentSandboxLimits
from verifier.agents.sandbox.making import SANDBOX_ID, environment_image, launch_sandbox, let_go
from verifier.agents.sandbox.seed import MAX_SEED_FILES, SeedError, batches, read_seed
from verifier.agents.sandbox.transfers import TRANSFER_TIMEOUT_S, FolderDownloadResponse, SandboxFiles
from verifier.closing import Closing
from verifier.sandbox import provenance
from verifier.sandbox.container import EngineError, connect, container_record, remove, translated
from verifier.sandbox.provenance import Made
from verifier.text import one_line

SCRATCH = "/tmp"
#: Re-exported: the sandbox's users, labels and CPU weight live in `identity`.
__all__ = [
    "AGENT_CPU_SHARES",
    "AGENT_UID",
    "KEEPALIVE",
    "KEEPER_UID",
    "LABEL_AGENT_LIMITS",
    "LABEL_AGENT_SANDBOX",
    "LABEL_AGENT_SHELL",
    "LABEL_AGENT_VOLUME",
    "WORKSPACE",
    "DockerSandbox",
    "FolderDownloadResponse",
]


class DockerSandbox(Closing, SandboxFiles, BaseSandbox):  # type: ignore[misc]
    """A Deep Agents sandbox backend on one hardened container, for one agent session.

    Use it as a context manager (or call `close()`): the container is removed on exit, also
    after an exception or Ctrl-C, and at interpreter exit if nobody closed it::

        with DockerSandbox() as sandbox:
            agent = create_deep_agent(model=..., backend=sandbox)

    With `idle_timeout_s` the sandbox is *lasting*: it outlives this process, another process
    reconnects with `DockerSandbox.attach(sandbox.id)`, `release()` lets go of it without
    removing it, and it ends by itself after `idle_timeout_s` without use (then `verifier gc`
    removes it). `close()` and the context manager still remove it.

    Args:
        image: the image to run; the verifier's sandbox image for this recipe by default
            (`verifier image build` makes it).
        requirements: packages from the index (suite.toml's form, e.g. ``["numpy>=2,<3"]``): the
            session runs on their environment image (found or built on `image`), the one the
            grader uses for a suite declaring the same lines.
        suite: a suite folder: the session runs on that suite's environment (its `requirements`
            or requirements.txt). Not both with `requirements`.
        limits: what the session may use (`AgentSandboxLimits()` by default).
        client: a Docker client; one for the local engine by default (closed with the sandbox).
        shell: the shell that runs commands.
        idle_timeout_s: make a lasting sandbox that ends this long after its last use
            (1 s to 7 days); None (the default): it ends with this process.
        seed_from: a host folder copied into the new workspace (never mounted; caches and
            `.git` left out; at most `limits.workspace_bytes` and 10,000 files; no links).
        name: the sandbox's id (its container's name); a fresh unique one by default. A name
            already taken raises `NameTaken` (verifier.sandbox.container).

    Raises:
        ImageNotFound: the image is not built.
        SandboxUnavailable: the engine did not answer or the container did not start.
        SeedError: `seed_from` cannot be copied (a ValueError naming the file); nothing is left.
        ValueError: a bad `idle_timeout_s` or `name`.
        InvalidInput: a requirement is refused or cannot be resolved (names the line).
    """

    #: Ends this object's hold on the sandbox: removes a fleeting one; lets a lasting one go.
    _finalizer: weakref.finalize[..., DockerSandbox]

    def __init__(
        self,
        *,
        image: str | None = None,
        limits: AgentSandboxLimits | None = None,
        client: Any = None,
        shell: str = "/bin/bash",
        idle_timeout_s: float | None = None,
        seed_from: str | os.PathLike[str] | None = None,
        name: str | None = None,
        requirements: Sequence[str] | None = None,
        suite: str | os.PathLike[str] | None = None,
    ) -> None:
        self.limits = limits or AgentSandboxLimits()
        self.shell = shell
        self.idle_timeout_s = None if idle_timeout_s is None else check_idle_timeout(idle_timeout_s)
        if name is not None and not (isinstance(name, str) and SANDBOX_ID.fullmatch(name)):
            raise ValueError(
                f"name must be 1-128 letters, digits, '_', '.' or '-' (a letter or digit first), got {name!r}"
            )
        seed = None
        if seed_from is not None:  # read (and refused) before any container exists
            seed = read_seed(
                seed_from,
                max_files=MAX_SEED_FILES,
                max_bytes=self.limits.workspace_bytes,
                max_file_bytes=self.limits.file_size_bytes,
            )
        name = name or f"verifier-agent-{uuid.uuid4().hex[:12]}"
        volume = None if self.idle_timeout_s is None else f"{name}-workspace-{uuid.uuid4().hex[:8]}"
        self._setup(client, name, volume)
        try:
            self.container_id = self._start(environment_image(self._client, image, requirements, suite))
            if seed:
                self._seed(seed)
        except BaseException:
            if hasattr(self, "container_id"):
                self.close()
            elif self._own_client:
                self._client.close()
            raise

    def _setup(self, client: Any, name: str, volume: str | None) -> None:
        """What every sandbox object holds, made here or attached."""
        self.place = Place(workspace=WORKSPACE, roots=(WORKSPACE, SCRATCH))
        self._own_client = client is None
        self._client = client if client is not None else connect()
        self.name = name
        self._volume = volume
        self._lease = None if self.idle_timeout_s is None else LeaseClock(self.idle_timeout_s)

    def _start(self, image: str | None) -> str:
        cid, self._finalizer = launch_sandbox(
            self,
            self._client.api,
            name=self.name,
            image=image,
            limits=self.limits,
            shell=self.shell,
            idle_s=self.idle_timeout_s,
            volume=self._volume,
        )
        return cid

    def _seed(self, files: list[tuple[str, bytes]]) -> None:
        """Copy the seed's files into the workspace, or SeedError naming the first that failed."""
        for run in batches(files):
            answers = self.upload_files([(f"{WORKSPACE}/{rel}", data) for rel, data in run])
            for (rel, _), answer in zip(run, answers, strict=True):
                if answer.error is not None:
                    raise SeedError(f"seed_from: {rel} could not be copied: {answer.error}")

    @classmethod
    def attach(cls, sandbox_id: str, *, client: Any = None) -> DockerSandbox:
        """Reconnect to a live lasting sandbox (made with `idle_timeout_s`, by any process on this
        engine) by its id, the `id` property its maker saw. The result serves it with the limits
        and shell it was made with; `release()` lets go of it again, `close()` removes it.

        Ours means proven, never read from labels (`identity.prove`): the host's record
        written when it was made names this container's id, name, image and configuration digest,
        and its actual configuration (read-only root, no network, capabilities, users, limits,
        mounts, runtime) is the one it is made with.

        Raises UnknownSandbox (a LookupError) for an id that is not a live lasting sandbox of
        ours, saying which and why (`why`: missing, foreign, fleeting, starting or ended), and
        SandboxUnavailable when the engine does not answer or the records cannot be kept safely.
        """
        own = client is None
        client = connect() if own else client
        try:
            valid = isinstance(sandbox_id, str) and SANDBOX_ID.fullmatch(sandbox_id) is not None
            record = container_record(client.api, sandbox_id) if valid else None
            made = prove(client.api, record, str(sandbox_id))
            live(record or {}, made)
            box = cls.__new__(cls)
            cls._adopt(box, client, own, made)
            return box
        except BaseException:
            if own:
                client.close()
            raise

    def _adopt(self, client: Any, own: bool, made: Made) -> None:
        """Serve an attached lasting sandbox as its maker did (its proven record `made`)."""
        self.limits = AgentSandboxLimits.model_validate_json(made.facts[FACT_LIMITS])
        self.idle_timeout_s = float(made.facts[FACT_IDLE])
        self.shell = made.facts[FACT_SHELL]
        self._setup(client, made.name, made.facts[FACT_VOLUME])
        self._own_client = own
        self.container_id = made.id
        self._finalizer = weakref.finalize(self, let_go)

    # -- the session --------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The container's name (unique per session): what `attach` takes."""
        return self.name

    @property
    def lasting(self) -> bool:
        """Whether the sandbox outlives its process (made with `idle_timeout_s`)."""
        return self.idle_timeout_s is not None

    @property
    def closed(self) -> bool:
        """Whether this object is done with the sandbox (closed, or released)."""
        return not self._finalizer.alive

    def close(self) -> None:
        """Remove the sandbox: its container and, for a lasting one, its workspace volume
        (idempotent; a released object removes nothing)."""
        if self._volume is None:
            self._finalizer()
        elif self._finalizer.detach() is not None:  # by id: the name may be a new sandbox's by now
            if remove(self._client.api, self.container_id):
                provenance.forget(self.container_id)
            forget_volume(self._client.api, self._volume)
        if self._own_client:
            self._client.close()

    def release(self) -> None:
        """Let go of a lasting sandbox without removing it: it goes on running for another
        process to `attach`, until its idle timeout. A fleeting sandbox cannot outlive its
        process: for it this is `close()`."""
        if self._volume is None:
            self.close()
            return
        self._finalizer.detach()
        if self._own_client:
            self._client.close()

    def __repr__(self) -> str:
        return f"DockerSandbox({self.name}, {'closed' if self.closed else 'running'})"

    def _renew(self, need_s: float) -> None:
        """Before a call that may take `need_s` seconds: move a lasting sandbox's lease past it
        (`lease`), when this process's last write does not reach that far. Raises
        EngineError."""
        if self._lease is None:
            return
        now = time.monotonic()
        ahead = self._lease.ahead(need_s + BACKSTOP_S, now)
        if ahead is None:
            return
        with translated():
            run = Exec(self._client.api, self.container_id, renew_command(ahead), user=KEEPER, workdir="/")
            outcome = run.wait(deadline=run.started + TRANSFER_TIMEOUT_S, cap=4096)
        if outcome.exit_code == 0:
            self._lease.written(now, ahead)

    # -- commands -----------------------------------------------------------------------
    def _seconds(self, timeout: int | float | None) -> float:
        if timeout is None:
            return self.limits.command_timeout_s
        if timeout < 0:
            raise ValueError(f"timeout must be non-negative, got {timeout}")
        if timeout == 0:  # "no timeout": the longest this sandbox allows
            return self.limits.max_command_timeout_s
        most = self.limits.max_command_timeout_s
        if timeout > most:
            raise ValueError(f"timeout {timeout}s exceeds this sandbox's maximum ({most:g}s)")
        return float(timeout)

    def execute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        """Run `command` with the shell in /workspace as the agent's user.

        stdout and stderr come back merged, in order, capped at `limits.output_bytes`
        (`truncated=True` past it). At the timeout (`limits.command_timeout_s` when None, the
        maximum for 0) every process of the command's process group is killed and the exit
        code is 124. A command that writes more than FLOOD_FACTOR times the cap is stopped too.
        What a command leaves running in its process group is killed when it ends (a daemon
        that should outlive it starts its own session: `setsid cmd > log 2>&1 &`).
        Raises ValueError for a negative or too large timeout; trouble with the engine comes
        back as a response with exit_code None.
        """
        return self._execute(command, timeout, None)

    async def aexecute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        """`execute` in a worker thread: the event loop stays free. Cancelling the awaiting
        task kills the command before the cancellation goes on."""
        cancel = threading.Event()
        work = asyncio.ensure_future(asyncio.to_thread(self._execute, command, timeout, cancel))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait([work])
            raise

    def _execute(self, command: str, timeout: int | None, cancel: threading.Event | None) -> ExecuteResponse:
        if not isinstance(command, str) or not command.strip():
            return ExecuteResponse(output="Error: the command is empty.", exit_code=1)
        seconds = self._seconds(timeout)
        if self.closed:
            return ExecuteResponse(output=f"Error: the sandbox {self.name} is closed.", exit_code=None)
        argv = shell_command(self.shell, command, seconds + BACKSTOP_S)
        cap = self.limits.output_bytes
        try:
            with translated():
                # No admission slot (see AGENT_CPU_SHARES): the container's CPU quota and weight bound it.
                self._renew(seconds)
                user = f"{AGENT_UID}:{AGENT_UID}"
                run = Exec(self._client.api, self.container_id, argv, user=user, workdir=WORKSPACE, reports_group=True)
                try:
                    deadline = run.started + seconds
                    outcome = run.wait(deadline=deadline, cap=cap, stop_after=cap * FLOOD_FACTOR, cancel=cancel)
                except BaseException:  # Ctrl-C while waiting: the command must not outlive us
                    run.stop("cancelled")
                    run.close()
                    raise
        except EngineError as exc:
            reason = one_line(str(exc), 300)
            if self.idle_timeout_s is not None:
                reason += f" (a lasting sandbox ends after {self.idle_timeout_s:g} s without use)"
            return ExecuteResponse(output=f"Error: the sandbox could not run the command: {reason}", exit_code=None)
        return self._response(outcome, seconds)

    def _response(self, outcome: ExecOutcome, seconds: float) -> ExecuteResponse:
        text = outcome.stdout.decode("utf-8", "replace")
        if outcome.stderr:
            text += outcome.stderr.decode("utf-8", "replace")
        notes: list[str] = []
        exit_code = outcome.exit_code
        if outcome.stopped == "timeout":
            notes.append(f"[the command timed out after {seconds:g} s; its processes were killed]")
            exit_code = 124
        elif outcome.stopped == "output":
            flood = self.limits.output_bytes * FLOOD_FACTOR
            notes.append(f"[the command wrote more than {flood} bytes and was stopped]")
        if outcome.truncated:
            notes.append(f"[output cut at {self.limits.output_bytes} bytes]")
        if outcome.stuck:
            notes.append("[the command did not end after it was killed; it may still be running]")
        if notes:
            text = text + ("\n" if text and not text.endswith("\n") else "") + "\n".join(notes)
        return ExecuteResponse(output=text, exit_code=exit_code, truncated=outcome.truncated)

    # -- files --------------------------------------------------------------------------
    def _program(self, program: str, args: Sequence[str], *, user: int, stdin: bytes, cap: int) -> ExecOutcome:
        """Run one of the file programs; the engine's errors come out as EngineError."""
        argv = backstop(TRANSFER_TIMEOUT_S + BACKSTOP_S, [*PYTHON, program, *args])
        self._renew(TRANSFER_TIMEOUT_S)
        with translated():
            run = Exec(
                self._client.api,
                self.container_id,
                argv,
                user=f"{user}:{user}",
                workdir="/",
                stdin=stdin,
                stdin_timeout_s=TRANSFER_TIMEOUT_S,
            )
            return run.wait(deadline=run.started + TRANSFER_TIMEOUT_S, cap=cap)
