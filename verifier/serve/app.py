"""The routes of `verifier serve` (FastAPI). Thin: authenticate, read the bounded body, check what
the token may do, hand the check to the engine, answer the evidence.

Every refusal is an `ErrorBody` with its status: 401 no or unknown token, 403 not allowed, 404 no
such suite or evidence (another token's evidence is "not found" too: its existence is not told),
409 a pinned digest that differs, 408/413 a slow or oversized body, 422 a malformed request, 429
over the token's rate, concurrency or daily quota (with Retry-After), 503 overloaded or stopping
(with Retry-After). A check that ran answers its evidence with 200, whatever its status, except
`overloaded` (503, Retry-After, the evidence as the body): the host's fault, worth a retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import signal
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from verifier import __version__
from verifier.errors import InvalidInput
from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.serve import sandboxfusion
from verifier.serve.api import (
    BatchRequest,
    CheckRequest,
    ErrorBody,
    Health,
    InlineSuite,
    RunCodeRequest,
    RunCodeResponse,
    SuiteByName,
    SuiteInfo,
)
from verifier.serve.body import Refusal, declared_length, read_body
from verifier.serve.config import ServeConfig
from verifier.serve.engine import Engine, Purpose, overload_reason
from verifier.serve.metrics import CONTENT_TYPE_LATEST, Metrics
from verifier.serve.quota import Clients, ClientState, seconds_to_utc_midnight
from verifier.serve.store import EvidenceStore
from verifier.serve.tokens import TokenError, TokenSource, TokenSpec
from verifier.suite import Suite, suite_from_files

log = logging.getLogger("verifier.serve")
access_log = logging.getLogger("verifier.serve.access")
Model = TypeVar("Model", bound=BaseModel)


@dataclass
class ServerState:
    """Everything one server holds (no global state: `create_app` makes one per app)."""

    config: ServeConfig
    suites: dict[str, Suite]
    tokens: TokenSource
    make_engine: Callable[[], Engine]
    clients: Clients = field(default_factory=Clients)
    store: EvidenceStore = field(init=False)
    metrics: Metrics = field(init=False)
    engine: Engine | None = None
    stopping: bool = False

    def __post_init__(self) -> None:
        self.store = EvidenceStore(self.config.evidence_kept)
        self.metrics = Metrics(
            waiting=lambda: self.engine.admission.waiting + self.engine.queued if self.engine else 0,
            holding=lambda: self.engine.admission.holding if self.engine else 0,
            in_flight=lambda: self.engine.in_flight if self.engine else 0,
        )

    def running_engine(self) -> Engine:
        """The engine, or Refusal (503) once the server is stopping."""
        if self.engine is None or self.stopping:
            raise Refusal(503, "shutting_down", "the server is stopping", retry_after=self.config.retry_after_s)
        return self.engine


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


def admit_one(state: ServerState, spec: TokenSpec) -> ClientState:
    """Count one check of `spec` now, or Refusal (429): over its concurrency, rate or quota."""
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


async def parsed(request: Request, state: ServerState, model: type[Model]) -> Model:
    http = state.config.http
    declared_length(request.headers.get("content-length"), http.max_body_bytes)
    body = await read_body(request.stream(), max_bytes=http.max_body_bytes, timeout_s=http.body_timeout_s)
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


def make_candidate(value: str | dict[str, str]) -> Candidate:
    if isinstance(value, str):
        return Candidate.from_text(value, label="<request>")
    try:
        return Candidate.from_files(value, label="<request>")
    except InvalidInput as exc:
        raise Refusal(422, "invalid", str(exc)) from None


def answer(state: ServerState, evidence: Evidence) -> Response:
    headers = {}
    status = 200
    if evidence.status is Status.OVERLOADED:
        status = 503
        headers["Retry-After"] = str(state.config.retry_after_s)
    return Response(evidence.to_json(indent=None), status_code=status, media_type="application/json", headers=headers)


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


async def run_check(
    state: ServerState, spec: TokenSpec, client: ClientState, candidate: Candidate, suite: Suite, purpose: Purpose
) -> Evidence:
    """One admitted check; the principal's count is given back when it ends (also a check whose
    client went away: it still holds its sandbox until it ends)."""
    try:
        engine = state.running_engine()
    except Refusal:
        client.done()
        raise
    evidence = await engine.check(candidate, suite, purpose, on_done=client.done)
    record(state, spec, client, purpose, evidence)
    return evidence


# -- the routes ---------------------------------------------------------------------------------
def _body_of(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI's request body for a route that reads its own (bounded) body."""
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 408, 409, 413, 422, 429, 503)
}


def add_routes(app: FastAPI, state: ServerState) -> None:
    @app.get("/healthz", response_model=Health, tags=["service"])
    async def healthz() -> Health:
        engine = state.engine
        return Health(
            status="stopping" if state.stopping or engine is None else "ok",
            version=__version__,
            backend=engine.backend_name if engine else "local",
            policy=state.config.policy,
            slots=engine.slots if engine else 0,
        )

    @app.get("/metrics", tags=["service"], response_class=Response)
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/suites", response_model=list[SuiteInfo], responses=ERRORS, tags=["checks"])
    async def suites(request: Request) -> list[SuiteInfo]:
        """The registered suites this token may use, with their digests."""
        spec = principal(state, request)
        return [
            SuiteInfo(name=name, sha256=suite.sha256, kind=suite.kind)
            for name, suite in sorted(state.suites.items())
            if spec.may_use(name)
        ]

    evidence_answer: dict[int | str, dict[str, Any]] = {200: {"model": Evidence}, **ERRORS}

    @app.post("/v1/check", openapi_extra=_body_of(CheckRequest), responses=evidence_answer, tags=["checks"])
    async def check(request: Request) -> Response:
        """Verify one candidate against one suite; the answer is its evidence."""
        spec = principal(state, request)
        body = await parsed(request, state, CheckRequest)
        suite, purpose = resolve_suite(state, spec, body.suite)
        candidate = make_candidate(body.candidate)
        state.running_engine()
        client = admit_one(state, spec)
        return answer(state, await run_check(state, spec, client, candidate, suite, purpose))

    @app.post(
        "/v1/batch",
        openapi_extra=_body_of(BatchRequest),
        responses={200: {"content": {"application/x-ndjson": {}}}, **ERRORS},
        tags=["checks"],
    )
    async def batch(request: Request) -> StreamingResponse:
        """Many checks; their evidence streamed back as NDJSON lines `{"id", "evidence"}` in the order
        they finish. A client that goes away cancels every item not started yet."""
        spec = principal(state, request)
        body = await parsed(request, state, BatchRequest)
        return await stream_batch(state, spec, body)

    @app.get("/v1/evidence/{evidence_id}", responses={200: {"model": Evidence}, **ERRORS}, tags=["checks"])
    async def evidence(request: Request, evidence_id: str) -> Response:
        """Evidence this token made (kept in memory, the most recent `evidence_kept`)."""
        spec = principal(state, request)
        found = state.store.get(spec.name, evidence_id)
        if found is None:
            raise Refusal(404, "not_found", "no evidence of this token has that id")
        return Response(found.to_json(indent=None), media_type="application/json")

    add_run_code(app, state)


def add_run_code(app: FastAPI, state: ServerState) -> None:
    async def run(request: Request, token: str | None) -> Response:
        spec = principal(state, request, token)
        if not state.config.run_code.enabled:
            raise Refusal(404, "not_found", "/run_code is not enabled on this server")
        if not spec.run_code:
            raise Refusal(403, "forbidden", "this token may not use /run_code")
        body = await parsed(request, state, RunCodeRequest)
        candidate, suite = sandboxfusion.program(body, state.config.run_code)
        state.running_engine()
        client = admit_one(state, spec)
        evidence = await run_check(state, spec, client, candidate, suite, "programs")
        status, reply = sandboxfusion.response(evidence)
        headers = {"Retry-After": str(state.config.retry_after_s)} if status != 200 else {}
        return Response(reply.model_dump_json(), status_code=status, media_type="application/json", headers=headers)

    extra = _body_of(RunCodeRequest)
    responses: dict[int | str, dict[str, Any]] = {200: {"model": RunCodeResponse}, **ERRORS}

    @app.post("/run_code", openapi_extra=extra, responses=responses, tags=["sandboxfusion"])
    async def run_code(request: Request) -> Response:
        """SandboxFusion's /run_code (Python only), with the token in the Authorization header."""
        return await run(request, None)

    @app.post("/t/{token}/run_code", openapi_extra=extra, responses=responses, tags=["sandboxfusion"])
    async def run_code_token(request: Request, token: str) -> Response:
        """The same, with the token in the URL (verl's client sends no header): set verl's
        sandbox_fusion_url to http://HOST:PORT/t/TOKEN/run_code."""
        return await run(request, token)


# -- batches ------------------------------------------------------------------------------------
@dataclass
class _Item:
    id: str
    candidate: Candidate
    suite: Suite
    purpose: Purpose


async def stream_batch(state: ServerState, spec: TokenSpec, body: BatchRequest) -> StreamingResponse:
    """Refuse the whole batch before anything runs (a forbidden or unknown suite, duplicate ids,
    not enough quota), else stream its lines."""
    ids = [item.id for item in body.items]
    if len(set(ids)) != len(ids):
        raise Refusal(422, "invalid", "items: every id must be unique")
    items = []
    for item in body.items:
        suite, purpose = resolve_suite(state, spec, item.suite)
        items.append(_Item(item.id, make_candidate(item.candidate), suite, purpose))
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
    """Each item's line as it finishes; items wait for the token's concurrency and rate. When the
    client goes away (this generator is closed), the items not started are cancelled."""
    lines: asyncio.Queue[str] = asyncio.Queue()
    started: set[int] = set()

    async def one(index: int, item: _Item) -> None:
        await client.start(spec)
        try:
            wait = client.bucket.take(spec, time.monotonic(), reserve=True)
            if wait > 0:
                await asyncio.sleep(wait)
        except BaseException:
            client.done()
            raise
        started.add(index)
        evidence = await engine.check(item.candidate, item.suite, item.purpose, on_done=client.done)
        record(state, spec, client, item.purpose, evidence)
        line = {"id": item.id, "evidence": evidence.model_dump(mode="json")}
        await lines.put(json.dumps(line, ensure_ascii=True) + "\n")

    tasks = [asyncio.create_task(one(i, item)) for i, item in enumerate(items)]
    try:
        for _ in items:
            yield await lines.get()
    finally:
        for task in tasks:
            task.cancel()
        not_started = len(items) - len(started)
        if not_started:
            client.refund(not_started)
            state.metrics.cancelled.inc(not_started)


# -- the app ------------------------------------------------------------------------------------
def refusal_response(state: ServerState, exc: Refusal) -> JSONResponse:
    state.metrics.refused.labels(exc.error).inc()
    headers: dict[str, str] = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if exc.status in (408, 413):
        headers["Connection"] = "close"  # the rest of the body is not read
    body = ErrorBody(error=exc.error, reason=exc.reason).model_dump()
    return JSONResponse(body, status_code=exc.status, headers=headers)


def redacted(path: str) -> str:
    """A path as the logs show it: a token in the URL (/t/TOKEN/...) never reaches a log."""
    if path.startswith("/t/"):
        return "/t/<token>/" + path[3:].partition("/")[2]
    return path


class AccessLog:
    """One log line per request (uvicorn's own access log is off: it would print a URL token):
    method, path with any token redacted, status, principal name, seconds."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = {"code": 0}

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            who = scope.get("state", {}).get("principal", "-")
            access_log.info(
                "%s %s %s %s %.3fs",
                scope.get("method"),
                redacted(scope.get("path", "")),
                status["code"] or "-",
                who,
                time.monotonic() - started,
            )


class HeaderLimit:
    """431 for a request whose line and headers are over `max_header_bytes` in all. (uvicorn's
    h11 bound, `h11_max_incomplete_event_size`, only caps what it buffers while headers are
    incomplete: headers that arrive in one piece pass it, whatever their size.)"""

    def __init__(self, app: Callable[..., Awaitable[None]], max_header_bytes: int) -> None:
        self.app = app
        self.max_header_bytes = max_header_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path", b"")) + len(scope.get("query_string", b""))
            size += sum(len(name) + len(value) + 4 for name, value in scope.get("headers", []))
            if size > self.max_header_bytes:
                reason = f"the request line and headers are over this server's {self.max_header_bytes}-byte limit"
                body = ErrorBody(error="too_large", reason=reason).model_dump_json().encode()
                headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
                await send({"type": "http.response.start", "status": 431, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with the request models that routes read themselves (bounded bodies)."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        _, defs = models_json_schema(
            [(m, "validation") for m in (CheckRequest, BatchRequest, RunCodeRequest)],
            ref_template="#/components/schemas/{model}",
        )
        schema.setdefault("components", {}).setdefault("schemas", {}).update(defs.get("$defs", {}))
        app.openapi_schema = schema
    return app.openapi_schema


async def watch_tokens(state: ServerState) -> None:
    """Read the token file again whenever it changes (a rotation needs no restart)."""
    while True:
        await asyncio.sleep(state.config.token_reload_s)
        reload_tokens(state, only_if_changed=True)


def reload_tokens(state: ServerState, *, only_if_changed: bool) -> None:
    try:
        changed = state.tokens.reload_if_changed() if only_if_changed else bool(state.tokens.reload())
    except TokenError as exc:
        state.metrics.token_reloads.labels("error").inc()
        log.error("the token file was not taken (the previous one stays): %s", exc)
        return
    if changed:
        state.metrics.token_reloads.labels("ok").inc()
        log.info("token file read: %d tokens", len(state.tokens.book.by_hash))


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServerState = app.state.verifier
    loop = asyncio.get_running_loop()
    state.engine = await asyncio.to_thread(state.make_engine)
    watcher = asyncio.create_task(watch_tokens(state))
    on_main = threading.current_thread() is threading.main_thread()
    if on_main:
        loop.add_signal_handler(signal.SIGHUP, lambda: reload_tokens(state, only_if_changed=False))
    log.info("ready: %d suites, policy %s, %d slots", len(state.suites), state.config.policy, state.engine.slots)
    try:
        yield
    finally:
        state.stopping = True
        watcher.cancel()
        if on_main:
            loop.remove_signal_handler(signal.SIGHUP)
        await asyncio.to_thread(state.engine.close)
        log.info("stopped: every container removed")


def create_app(state: ServerState) -> FastAPI:
    app = FastAPI(
        docs_url=None,  # no HTML pages that load scripts from elsewhere; /openapi.json is the document
        redoc_url=None,
        title="verifier serve",
        version=__version__,
        description="Sandboxed, content-bound verification of model-written code (docs/serve.md).",
        lifespan=lifespan,
    )
    app.state.verifier = state

    @app.exception_handler(Refusal)
    async def refused(_: Request, exc: Refusal) -> JSONResponse:
        return refusal_response(state, exc)

    add_routes(app, state)
    app.openapi = lambda: openapi_schema(app)  # type: ignore[method-assign]
    app.add_middleware(HeaderLimit, max_header_bytes=state.config.http.max_header_bytes)  # type: ignore[arg-type]
    app.add_middleware(AccessLog)  # type: ignore[arg-type]
    return app
