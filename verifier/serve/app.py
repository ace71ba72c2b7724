"""The app of `verifier serve`: FastAPI with the routes (`verifier.serve.routes`), the middleware
(the access log, and the short way of requests that run one check),
refusals as `ErrorBody` answers, the OpenAPI document, and the lifespan (the engine made at the
start and closed at the end, the token file watched, SIGHUP)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic.json_schema import models_json_schema

from verifier._distribution import __version__
from verifier.serve.api import BatchRequest, CheckRequest, ErrorBody, RunCodeRequest
from verifier.serve.body import Refusal
from verifier.serve.middleware import AccessLog, HotRoutes, ReleaseHeld
from verifier.serve.routes import add_routes, hot_route
from verifier.serve.state import ServerState
from verifier.serve.tokens import TokenError

log = logging.getLogger("verifier.serve")


# -- the app ------------------------------------------------------------------------------------
def refusal_response(state: ServerState, exc: Refusal) -> JSONResponse:
    state.metrics.refused.labels(exc.error).inc()
    headers: dict[str, str] = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if exc.close:
        headers["Connection"] = "close"  # the rest of the body is not read
    body = ErrorBody(error=exc.error, reason=exc.reason).model_dump()
    return JSONResponse(body, status_code=exc.status, headers=headers)


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


def create_app(state: ServerState) -> AccessLog:
    """The server's ASGI app: the access log around the release of what a request held
    (`ReleaseHeld`) around the short way of one-check requests (`HotRoutes`) around FastAPI
    (every route, the OpenAPI document, the lifespan)."""
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
    hot = HotRoutes(
        app,
        route=lambda method, path: hot_route(state, method, path),
        refused=lambda exc: refusal_response(state, exc),
    )
    return AccessLog(ReleaseHeld(hot))
