"""One check's way through the server, shared by the routes: who asks (`principal`), whether
its token may (`admit_one`, `resolve_suite`), the bounded body (`parsed`, held against its
principal's share of bodies until the request is answered), the run and its record
(`run_check`, `record`), its answer (`Answer`: counted while it is sent) and a batch's items
streamed as they finish (`stream_batch`)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect

from verifier.errors import InvalidInput
from verifier.evidence import Evidence, Status
from verifier.extract import extract_code
from verifier.hashing import sha256_bytes
from verifier.inputs import Candidate
from verifier.serve.api import BatchLine, BatchRequest, ExtractOptions, InlineSuite, SuiteByName
from verifier.serve.body import Refusal, declared_length, read_body
from verifier.serve.engine import Engine, Purpose, overload_reason
from verifier.serve.quota import ClientState, seconds_to_utc_midnight
from verifier.serve.state import ServerState
from verifier.serve.store import AnswerBudget, Lease
from verifier.serve.tokens import TokenSpec
from verifier.suite import Suite, suite_from_files
from verifier.verify import Verifier

Model = TypeVar("Model", bound=BaseModel)
#: The ASGI scope's key for what a request holds (`Lease`s), given back by the middleware
#: (`middleware.ReleaseHeld`) once the request is answered, also a streamed answer.
HELD = "verifier.held"
#: An answer is sent in pieces of this size: each waits while the client's buffers are full, so
#: what the client has not taken stays counted (`Answer`) until it is taken or cut off.
ANSWER_PIECE = 64 * 1024


# -- who is asking ------------------------------------------------------------------------------
def principal(state: ServerState, request: Request, token: str | None = None) -> TokenSpec:
    """The principal of the request's token (the Authorization header's, or `token` from the URL)."""
    if token is None:
        header = request.headers.get("authorization")
        if not header:
            raise Refusal(401, "unauthorized", "no token: send the header Authorization: Bearer TOKEN")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Refusal(401, "unauthorized", "the Authorization header is not Bearer TOKEN")
        token = value.strip()
    spec = state.tokens.book.find(token)
    if spec is None:
        raise Refusal(401, "unauthorized", "the token is not one this server knows")
    request.state.principal = spec.name
    return spec


def answer_room(state: ServerState, spec: TokenSpec) -> None:
    """Refusal unless the answers of `spec`'s principal (and of everyone) not yet taken by their
    clients are under their bounds: 429 (the principal's clients do not read), 503 (the server's)."""
    budget = state.answers
    if budget.has_room(spec.name):
        return
    mine = budget.owner_bytes(spec.name)
    if mine >= budget.max_bytes_per_owner:
        raise Refusal(
            429,
            "concurrency",
            f"this token's clients have not taken {mine} bytes of answers, its limit on this server "
            f"({budget.max_bytes_per_owner}): read them, then send more",
            retry_after=1,
        )
    raise Refusal(
        503,
        "overloaded",
        f"the server holds {budget.bytes} bytes of answers its clients have not taken, its limit",
        retry_after=state.config.retry_after_s,
    )


def admit_one(state: ServerState, spec: TokenSpec) -> ClientState:
    """Count one check of `spec` now, or Refusal (429): over its concurrency, rate or quota, or
    its clients have not taken their answers (`answer_room`)."""
    answer_room(state, spec)
    client = state.clients.state(spec)
    if client.running >= spec.concurrency:
        raise Refusal(429, "concurrency", f"this token may run {spec.concurrency} checks at once", retry_after=1)
    if not client.charge(spec, 1, time.time()):
        raise Refusal(
            429,
            "quota",
            f"this token's daily quota of {spec.daily_quota} checks is spent (it starts again at 00:00 UTC)",
            retry_after=seconds_to_utc_midnight(),
        )
    wait = client.bucket.take(spec, time.monotonic(), reserve=False)
    if wait > 0:
        client.refund(1)
        rate = f"this token may start {spec.rate_per_s:g} checks a second"
        raise Refusal(429, "rate_limited", rate, retry_after=math.ceil(wait))
    client.try_start(spec)
    return client


def _holding(request: Request, state: ServerState, owner: str) -> Lease:
    """A lease on the server's bodies for this request of `owner`, given back once it is answered."""
    lease = state.bodies.lease(owner)
    request.scope.setdefault(HELD, []).append(lease)
    return lease


async def parsed(request: Request, state: ServerState, model: type[Model], owner: str) -> Model:
    """The request's body as `model`: at most `max_body_bytes`, within `body_timeout_s`, and held
    (from its first byte until the request is answered) within its principal's share of the
    server's bodies and the server's (429 / 503 and closed past them: the client's, the host's)."""
    http = state.config.http
    declared_length(request.headers.get("content-length"), http.max_body_bytes)
    lease = _holding(request, state, owner)

    def hold(size: int) -> None:
        over = lease.grow(size)
        if over == "owner":
            raise Refusal(
                429,
                "concurrency",
                f"this token's requests in progress hold {state.bodies.owner_bytes(owner)} bytes of bodies, and "
                f"{size} more would pass its limit on this server ({http.body_held_per_token}): send it again "
                "once some are answered",
                retry_after=1,
                close=True,
            )
        if over == "all":
            raise Refusal(
                503,
                "overloaded",
                f"the server's requests in progress hold {state.bodies.bytes} bytes of bodies, its limit",
                retry_after=state.config.retry_after_s,
                close=True,
            )

    try:
        body = await read_body(
            request.stream(), max_bytes=http.max_body_bytes, timeout_s=http.body_timeout_s, hold=hold
        )
    except ClientDisconnect:  # nobody reads the answer; said for the log and the metrics
        raise Refusal(400, "invalid", "the client went away before its body was complete") from None
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise Refusal(422, "invalid", f"{where}: {first['msg']}") from None


# -- what is checked ----------------------------------------------------------------------------
def resolve_suite(state: ServerState, spec: TokenSpec, ref: str | SuiteByName | InlineSuite) -> tuple[Suite, Purpose]:
    if isinstance(ref, InlineSuite):
        if not spec.inline_suites:
            raise Refusal(403, "forbidden", "this token may not send inline suites")
        try:
            files = {path: text.encode("utf-8") for path, text in ref.files.items()}
            return suite_from_files(files, ref.name), "inline"
        except UnicodeEncodeError:
            raise Refusal(422, "invalid", "suite.files: a file is not valid Unicode") from None
        except InvalidInput as exc:
            raise Refusal(422, "invalid", str(exc)) from None
    by_name = SuiteByName(name=ref) if isinstance(ref, str) else ref
    if not spec.may_use(by_name.name):
        raise Refusal(403, "forbidden", f"this token may not use the suite {by_name.name!r}")
    suite = state.suites.get(by_name.name)
    if suite is None:
        raise Refusal(404, "not_found", f"no suite {by_name.name!r} is registered here (GET /v1/suites)")
    if by_name.sha256 is not None and by_name.sha256 != suite.sha256:
        raise Refusal(409, "conflict", f"the suite {by_name.name!r} here has the digest {suite.sha256}")
    return suite, "registered"


@dataclass(frozen=True)
class NoCode:
    """A model's answer with no code in it (`extract`): answered invalid_input, never run."""

    reason: str
    sha256: str


def make_candidate(value: str | dict[str, str], extract: ExtractOptions | None = None) -> Candidate | NoCode:
    """The candidate of a request; with `extract`, the code taken out of the answer (CPU work on
    untrusted text: call it off the event loop)."""
    if extract is not None:
        if not isinstance(value, str):
            raise Refusal(422, "invalid", "extract: the candidate must be one text (a model's answer), not a folder")
        found = extract_code(value, extract.entry_point, prompt=extract.prompt)
        if found.code is None:
            return NoCode(found.reason, sha256_bytes(value.encode("utf-8", "surrogatepass")))
        value = found.code
    if isinstance(value, str):
        return Candidate.from_text(value, label="<request>")
    try:
        return Candidate.from_files(value, label="<request>")
    except InvalidInput as exc:
        raise Refusal(422, "invalid", str(exc)) from None


class Answer(Response):
    """A JSON answer of `owner`'s, counted in the server's `AnswerBudget` while it is sent: in
    pieces (`ANSWER_PIECE`), each sent once the client has taken the ones before (uvicorn waits
    while the connection's buffer is over its mark), so an answer its client does not read
    stays counted until it is read or cut off (`send_timeout_s`), and a principal whose clients
    hold too much starts nothing more (`answer_room`)."""

    media_type = "application/json"

    def __init__(
        self, content: str, *, budget: AnswerBudget, owner: str, status_code: int = 200, headers: Any = None
    ) -> None:
        super().__init__(content, status_code=status_code, headers=headers)
        self.budget = budget
        self.owner = owner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = memoryview(self.body)  # pieces of it, not copies (uvicorn writes any bytes-like)
        size = len(body)
        self.budget.take(self.owner, size)
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            start = 0
            while True:
                piece = body[start : start + ANSWER_PIECE]
                start += ANSWER_PIECE
                await send({"type": "http.response.body", "body": piece, "more_body": start < size})
                if start >= size:
                    break
        finally:
            self.budget.give(self.owner, size)


def answer(state: ServerState, owner: str, evidence: Evidence) -> Response:
    headers = {}
    status = 200
    if evidence.status is Status.OVERLOADED:
        status = 503
        headers["Retry-After"] = str(state.config.retry_after_s)
    return Answer(evidence.model_dump_json(), budget=state.answers, owner=owner, status_code=status, headers=headers)


def never_started(evidence: Evidence) -> bool:
    """An overloaded answer for a check that never reached a sandbox (no image was reached)."""
    return evidence.status is Status.OVERLOADED and not evidence.image_id


def record(state: ServerState, spec: TokenSpec, client: ClientState, purpose: Purpose, evidence: Evidence) -> None:
    """Keep the evidence for its principal and count it; a check that never started is not
    charged to the principal's quota."""
    if never_started(evidence):
        client.refund(1)
        state.metrics.overloaded.labels(overload_reason(evidence)).inc()
    elif evidence.status is Status.OVERLOADED:
        state.metrics.overloaded.labels("busy_host").inc()
    state.store.put(spec.name, evidence)
    state.metrics.checked(purpose, evidence)


def no_code(state: ServerState, missing: NoCode) -> Evidence:
    """The invalid_input evidence of an answer with no code (no sandbox, no pool made for it)."""
    engine = state.running_engine()
    verifier = Verifier(limits=state.config.limits, image=engine.image)
    return verifier.fail_closed(Status.INVALID_INPUT, missing.reason, candidate_sha256=missing.sha256)


async def _checked(
    state: ServerState,
    engine: Engine,
    client: ClientState,
    candidate: Candidate | NoCode,
    suite: Suite,
    purpose: Purpose,
) -> Evidence:
    if isinstance(candidate, NoCode):
        try:
            return no_code(state, candidate)
        finally:
            client.done()
    return await engine.check(candidate, suite, purpose, on_done=client.done)


async def run_check(
    state: ServerState,
    spec: TokenSpec,
    client: ClientState,
    candidate: Candidate | NoCode,
    suite: Suite,
    purpose: Purpose,
) -> Evidence:
    """One admitted check; the principal's count is given back when it ends (also a check whose
    client went away: it still holds its sandbox until it ends)."""
    try:
        engine = state.running_engine()
    except Refusal:
        client.done()
        raise
    evidence = await _checked(state, engine, client, candidate, suite, purpose)
    record(state, spec, client, purpose, evidence)
    return evidence


# -- batches ------------------------------------------------------------------------------------
@dataclass
class _Item:
    id: str
    candidate: Candidate | NoCode
    suite: Suite
    purpose: Purpose


async def stream_batch(state: ServerState, spec: TokenSpec, body: BatchRequest) -> StreamingResponse:
    """Refuse the whole batch before anything runs (a forbidden or unknown suite, duplicate ids,
    not enough quota), else stream its lines."""
    ids = [item.id for item in body.items]
    if len(set(ids)) != len(ids):
        raise Refusal(422, "invalid", "items: every id must be unique")
    resolved = [resolve_suite(state, spec, item.suite) for item in body.items]
    candidates = await asyncio.to_thread(lambda: [make_candidate(i.candidate, i.extract) for i in body.items])
    items = [
        _Item(item.id, candidate, suite, purpose)
        for item, candidate, (suite, purpose) in zip(body.items, candidates, resolved, strict=True)
    ]
    engine = state.running_engine()
    client = state.clients.state(spec)
    if not client.charge(spec, len(items), time.time()):
        left = max(0, spec.daily_quota - client.used)
        raise Refusal(
            429,
            "quota",
            f"the batch has {len(items)} checks and this token's daily quota has {left} left",
            retry_after=seconds_to_utc_midnight(),
        )
    lines = batch_lines(state, engine, spec, client, items)
    return StreamingResponse(lines, media_type="application/x-ndjson")


async def batch_lines(
    state: ServerState, engine: Engine, spec: TokenSpec, client: ClientState, items: list[_Item]
) -> AsyncIterator[str]:
    """Each item's line as it finishes; items start in order as the token's concurrency and rate
    allow, and only while the answers its client has not read yet are under their bounds
    (`state.answers`): a client that stops reading stops its batch. When the client goes away
    (this generator is closed), the items not started are cancelled."""
    lines: asyncio.Queue[tuple[str, int]] = asyncio.Queue()  # each waiting line is counted in state.answers
    started: set[int] = set()
    tasks: list[asyncio.Task[None]] = []
    budget = state.answers

    async def one(index: int, item: _Item) -> None:
        try:
            wait = client.bucket.take(spec, time.monotonic(), reserve=True)
            if wait > 0:
                await asyncio.sleep(wait)
        except BaseException:
            client.done()
            raise
        started.add(index)
        evidence = await _checked(state, engine, client, item.candidate, item.suite, item.purpose)
        record(state, spec, client, item.purpose, evidence)
        line = BatchLine(id=item.id, evidence=evidence).model_dump_json() + "\n"
        budget.take(spec.name, len(line))
        lines.put_nowait((line, len(line)))

    async def feed() -> None:
        for index, item in enumerate(items):
            await budget.room(spec.name)
            await client.start(spec)
            tasks.append(asyncio.create_task(one(index, item)))

    feeder = asyncio.create_task(feed())
    try:
        for _ in items:
            line, size = await lines.get()
            try:
                yield line
            finally:
                budget.give(spec.name, size)
    finally:
        feeder.cancel()
        for task in tasks:
            task.cancel()
        while not lines.empty():
            budget.give(spec.name, lines.get_nowait()[1])
        not_started = len(items) - len(started)
        if not_started:
            client.refund(not_started)
            state.metrics.cancelled.inc(not_started)
