"""The routes of `verifier serve` (FastAPI). Thin: authenticate, read the bounded body, check what
the token may do, hand the check to the engine, answer the evidence (`verifier.serve.checks`).

Every refusal is an `ErrorBody` with its status: 401 no or unknown token, 403 not allowed, 404 no
such suite or evidence (another token's evidence is "not found" too: its existence is not told),
409 a pinned digest that differs, 408/413/431 a slow or oversized request, 422 a malformed one,
429 over the token's rate, concurrency or daily quota (with Retry-After), 503 overloaded or
stopping (with Retry-After). A check that ran answers its evidence with 200, whatever its status,
except `overloaded` (503, Retry-After, the evidence as the body): the host's fault, worth a retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel

from verifier._distribution import __version__
from verifier.evidence import Evidence
from verifier.serve import sandboxfusion
from verifier.serve.api import BatchRequest, CheckRequest, ErrorBody, Health, RunCodeRequest, RunCodeResponse, SuiteInfo
from verifier.serve.body import Refusal
from verifier.serve.checks import (
    Answer,
    admit_one,
    answer,
    answer_room,
    make_candidate,
    parsed,
    principal,
    record,
    resolve_suite,
    run_check,
    stream_batch,
)
from verifier.serve.metrics import CONTENT_TYPE_LATEST
from verifier.serve.quota import ClientState
from verifier.serve.state import ServerState
from verifier.serve.tokens import TokenSpec


# -- the routes ---------------------------------------------------------------------------------
def _body_of(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI's request body for a route that reads its own (bounded) body."""
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 408, 409, 413, 422, 429, 503)
}


def add_routes(app: FastAPI, state: ServerState) -> None:
    add_service_routes(app, state)
    add_check_routes(app, state)
    add_run_code(app, state)


def add_service_routes(app: FastAPI, state: ServerState) -> None:
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


def add_check_routes(app: FastAPI, state: ServerState) -> None:

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
        return await check_one(state, request)

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
        body = await parsed(request, state, BatchRequest, spec.name)
        return await stream_batch(state, spec, body)

    @app.get("/v1/evidence/{evidence_id}", responses={200: {"model": Evidence}, **ERRORS}, tags=["checks"])
    async def evidence(request: Request, evidence_id: str) -> Response:
        """Evidence this token made (kept in memory, the most recent `evidence_kept`)."""
        spec = principal(state, request)
        answer_room(state, spec)
        found = state.store.get(spec.name, evidence_id)
        if found is None:
            raise Refusal(404, "not_found", "no evidence of this token has that id")
        return Answer(found.model_dump_json(), budget=state.answers, owner=spec.name)


def add_run_code(app: FastAPI, state: ServerState) -> None:
    async def run(request: Request, token: str | None) -> Response:
        return await run_program(state, request, token)

    extra = _body_of(RunCodeRequest)
    responses: dict[int | str, dict[str, Any]] = {200: {"model": RunCodeResponse}, **ERRORS}

    @app.post("/run_code", openapi_extra=extra, responses=responses, tags=["sandboxfusion"])
    async def run_code(request: Request) -> Response:
        """SandboxFusion's /run_code (its languages: docs/serve.md), with the token in the Authorization header."""
        return await run(request, None)

    @app.post("/t/{token}/run_code", openapi_extra=extra, responses=responses, tags=["sandboxfusion"])
    async def run_code_token(request: Request, token: str) -> Response:
        """The same, with the token in the URL (verl's client sends no header): set verl's
        sandbox_fusion_url to http://HOST:PORT/t/TOKEN/run_code."""
        return await run(request, token)


# -- the endpoints that one check each takes (also called straight from `HotRoutes`) -------------
async def check_one(state: ServerState, request: Request) -> Response:
    """POST /v1/check."""
    spec = principal(state, request)
    body = await parsed(request, state, CheckRequest, spec.name)
    suite, purpose = resolve_suite(state, spec, body.suite)
    candidate = (
        await asyncio.to_thread(make_candidate, body.candidate, body.extract)
        if body.extract
        else make_candidate(body.candidate)
    )
    state.running_engine()
    client = admit_one(state, spec)
    return answer(state, spec.name, await run_check(state, spec, client, candidate, suite, purpose))


async def run_program(state: ServerState, request: Request, token: str | None) -> Response:
    """POST /run_code and /t/TOKEN/run_code."""
    spec = principal(state, request, token)
    if not state.config.run_code.enabled:
        raise Refusal(404, "not_found", "/run_code is not enabled on this server")
    if not spec.run_code:
        raise Refusal(403, "forbidden", "this token may not use /run_code")
    body = await parsed(request, state, RunCodeRequest, spec.name)
    candidate, _ = sandboxfusion.program(body, state.config.run_code)  # refused here if it cannot run
    limits = sandboxfusion.limits_of(body, state.config.run_code)
    state.running_engine()
    client = admit_one(state, spec)

    # Requests for the same program waiting at once share one sandbox job (`coalesce`).
    def kept(who: TokenSpec, count: ClientState, evidence: Evidence) -> None:
        record(state, who, count, "programs", evidence)

    evidence, index = await state.coalescer.run(spec, client, candidate, body.stdin or "", limits, kept)
    status, reply = sandboxfusion.case_response(evidence, index, body.code, limits.language)
    headers = {"Retry-After": str(state.config.retry_after_s)} if status != 200 else {}
    return Answer(reply.model_dump_json(), budget=state.answers, owner=spec.name, status_code=status, headers=headers)


def hot_route(state: ServerState, method: str, path: str) -> Callable[[Request], Awaitable[Response]] | None:
    """The endpoint of a request that runs one check (the routes a reward loop calls thousands of
    times), or None: every other request goes through FastAPI."""
    if method != "POST":
        return None
    if path == "/v1/check":
        return lambda request: check_one(state, request)
    if path == "/run_code":
        return lambda request: run_program(state, request, None)
    if path.startswith("/t/") and path.endswith("/run_code"):
        token = path[3 : -len("/run_code")]
        if token and "/" not in token:
            return lambda request: run_program(state, request, token)
    return None
