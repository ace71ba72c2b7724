"""Concurrent `/run_code` requests for the same program, run as one sandbox job.

verl's code reward sends one request per test case, many at once: the same program, each case's
input on stdin. Alone, each request is a sandbox job of its own (the trusted side started, the
result read, the evidence made), several times what the case itself costs; `verifier bench io`
runs a sample's cases in one job. Here, requests **of one principal** for **the same program**
(the same candidate digest: code and files) **with the same limits** that wait for a sandbox at
the same time become one program suite of as many cases, run as one job. Nothing is waited for
to make a group: a request that finds no group waiting starts one, and the group is closed when
its job leaves the server's queue (`Engine.check` builds the suite then). Requests join a group
only while the server is saturated (every worker busy or about to be, by groups made and not
yet handed to the engine: a job of their own would wait too);
with a worker free, each runs at once, on its own, beside the others.

What each request gets is what it would get alone:

- its case runs in a fresh process, and the candidate side is reset between cases (every process
  killed, every writable place wiped: no case sees another's processes or files,
  `runner/program.py`), under the same time and memory limits;
- the output limit of the job grows with its cases, so that each case keeps exactly the share of
  output it would have alone (`kept_output_bytes`, checked), and the job's own time limit is the
  cases' limits added up;
- a case the job did not run (the run stops after repeated timeouts, or at its own time limit) is
  run again alone, so no request's answer depends on another's;
- a job-wide answer (the host too busy, our sandbox failing, a syntax error: the same program) is
  every member's, as it would be each one's alone.

Each request is answered from its own case (`sandboxfusion.case_response`); the evidence kept
for `GET /v1/evidence` is the group's (every case, all the principal's own requests), and each
answer names it. Groups are bounded: `MAX_GROUP` requests, `MAX_GROUP_OUTPUT_BYTES` of output
limit, `MAX_GROUP_INPUT_BYTES` of stdin, and a job time limit within `Limits`' hour.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.runner.protocol import kept_output_bytes
from verifier.serve.body import Refusal
from verifier.serve.config import RunCodeConfig
from verifier.serve.engine import Engine
from verifier.serve.quota import ClientState
from verifier.serve.sandboxfusion import RUN_SLACK_S, ProgramLimits, program_suite
from verifier.serve.tokens import TokenSpec
from verifier.suite import Suite

#: Most requests in one job.
MAX_GROUP = 16
#: Most output limit of one job (each case's share times the cases): what its result may take.
MAX_GROUP_OUTPUT_BYTES = 64 * 1024**2
#: Most bytes of stdin in one job's cases (the suite's files are bounded at 8 MiB).
MAX_GROUP_INPUT_BYTES = 4 * 1024**2
#: The job's time limit is at most Limits' (an hour).
MAX_JOB_S = 3600.0

#: The principal, the candidate's digest, and its limits and language (the same code in C and C++
#: are two programs).
Key = tuple[str, str, ProgramLimits]
#: Keeps a check's evidence for its principal and counts it (`checks.record`, for "programs").
Record = Callable[[TokenSpec, ClientState, Evidence], None]


class _Empty(Exception):
    """Raised when a group's job leaves the queue with no member left (their clients went away)."""


def group_size(config: RunCodeConfig, limits: ProgramLimits) -> int:
    """How many requests with these limits may share a job (1: they run alone, as every request
    with `fetch_files` does: its files are read after its own case, the job's last)."""
    if limits.fetch_files:
        return 1
    by_time = int((MAX_JOB_S - RUN_SLACK_S - limits.compile_timeout_s) // limits.run_timeout_s)
    by_output = MAX_GROUP_OUTPUT_BYTES // config.output_bytes
    size = max(1, min(MAX_GROUP, by_time, by_output))
    # Each case's share of the output must be the one it has alone (never fewer bytes kept).
    while size > 1 and kept_output_bytes(size * config.output_bytes, size) != kept_output_bytes(config.output_bytes, 1):
        size -= 1
    return size


@dataclass(eq=False)
class _Member:
    stdin: str
    client: ClientState
    answer: asyncio.Future[tuple[Evidence, int]]
    #: Its client went away (its request was cancelled).
    gone: bool = False


@dataclass(eq=False)
class _Group:
    key: Key
    capacity: int
    members: list[_Member] = field(default_factory=list)
    input_bytes: int = 0
    sealed: bool = False
    #: Its job was handed to the engine (it holds a worker, or waits for one, in `free_workers`).
    submitted: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    task: asyncio.Task[None] | None = None

    def join(self, member: _Member) -> bool:
        """Add `member` unless the group is closed or full (then False)."""
        size = len(member.stdin.encode("utf-8", "surrogatepass"))
        with self.lock:
            if self.sealed or len(self.members) >= self.capacity:
                return False
            if self.members and self.input_bytes + size > MAX_GROUP_INPUT_BYTES:
                return False
            self.members.append(member)
            self.input_bytes += size
            return True

    def leave(self, member: _Member) -> bool:
        """Take `member` out before the job is built (its client went away); False once built.
        The last one out cancels the job (it has not started)."""
        with self.lock:
            if self.sealed or member not in self.members:
                return False
            self.members.remove(member)
            empty = not self.members
        if empty and self.task is not None:
            self.task.cancel()
        return True

    def seal(self) -> list[_Member]:
        with self.lock:
            self.sealed = True
            return list(self.members)


class Coalescer:
    """The groups of one server, waiting for their jobs (see the module's text)."""

    def __init__(self, config: RunCodeConfig, running_engine: Callable[[], Engine]) -> None:
        self.config = config
        self.running_engine = running_engine
        self._open: dict[Key, _Group] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Requests answered from a job of more than one (a counter, for the bench and the tests).
        self.shared = 0

    async def run(
        self,
        spec: TokenSpec,
        client: ClientState,
        candidate: Candidate,
        stdin: str,
        limits: ProgramLimits,
        record: Record,
    ) -> tuple[Evidence, int]:
        """The evidence of the job that ran this request's case, and the case's index in it. The
        request is admitted (`client` counts it); its count is given back when its case has run.
        Each job's evidence is recorded once (`record`)."""
        config = self.config
        key: Key = (spec.name, candidate.sha256, limits)
        member = _Member(stdin, client, asyncio.get_running_loop().create_future())
        try:
            free = self.running_engine().free_workers
        except Refusal:
            client.done()
            raise
        # Groups made and not yet handed to the engine are jobs about to take a worker too.
        saturated = free - sum(not g.submitted for g in self._open.values()) <= 0
        group = self._open.get(key)
        # Joined only while the server is saturated (a job of its own would wait anyway): with a
        # worker free, a request runs at once, beside the others.
        if group is None or not saturated or not group.join(member):
            group = _Group(key, group_size(config, limits))
            group.join(member)
            self._open[key] = group
            group.task = task = asyncio.create_task(self._run_group(spec, candidate, limits, group, record))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        try:
            evidence, index = await asyncio.shield(member.answer)
        except asyncio.CancelledError:
            member.gone = True
            if group.leave(member):  # never part of a job: its count is given back now
                client.refund(1)
                client.done()
            elif _to_run_alone(member):  # nobody runs it now
                client.done()
            raise
        if index < 0:  # its case was not run by the group's job: run alone
            suite = program_suite([stdin], limits, self.config)
            alone = await self.running_engine().check(candidate, suite, "programs", on_done=client.done)
            record(spec, client, alone)
            return alone, 0
        return evidence, index

    async def _run_group(
        self, spec: TokenSpec, candidate: Candidate, limits: ProgramLimits, group: _Group, record: Record
    ) -> None:
        members: list[_Member] = []

        def build() -> Suite:  # on the worker thread, when the job leaves the queue
            members.extend(group.seal())
            if not members:
                raise _Empty
            return program_suite([m.stdin for m in members], limits, self.config)

        try:
            engine = self.running_engine()
            group.submitted = True  # the engine counts it from this step on (no await between)
            evidence = await engine.check(candidate, build, "programs")
        except (Exception, asyncio.CancelledError) as exc:
            self._forget(group)
            for member in members or group.seal():
                if not member.answer.done():
                    if isinstance(exc, asyncio.CancelledError):
                        member.answer.cancel()
                    else:
                        member.answer.set_exception(exc)
                member.client.done()
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        self._forget(group)
        if not members:  # never started (overloaded, stopping): every member's answer
            members.extend(group.seal())
        self._answer(spec, evidence, members, record)

    def _forget(self, group: _Group) -> None:
        if self._open.get(group.key) is group:
            del self._open[group.key]

    def _answer(self, spec: TokenSpec, evidence: Evidence, members: list[_Member], record: Record) -> None:
        # Every case of the job is a member's, in order; else (never seen) every member runs alone.
        ran = len(evidence.cases) == len(members) or not evidence.cases
        if members:
            # One record of the job for the principal; every member was charged on admission.
            record(spec, members[0].client, evidence)
            if evidence.status is Status.OVERLOADED and not evidence.image_id and len(members) > 1:
                members[0].client.refund(len(members) - 1)  # `record` gave back one
        if len(members) > 1:
            self.shared += len(members)
        for index, member in enumerate(members):
            again = not ran or (bool(evidence.cases) and not evidence.cases[index].ran)
            if again and not member.gone and not member.answer.done():
                member.answer.set_result((evidence, -1))  # its own request runs it alone, then gives its count back
                continue
            member.client.done()
            if not member.answer.done():
                member.answer.set_result((evidence, index))


def _to_run_alone(member: _Member) -> bool:
    """Whether `member` was told to run its case alone (its count is then its own to give back)."""
    answer = member.answer
    return answer.done() and not answer.cancelled() and answer.exception() is None and answer.result()[1] < 0
