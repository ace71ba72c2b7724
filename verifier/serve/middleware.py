"""ASGI middleware of the server: its own access log (tokens redacted) and the short way of the
requests that run one check. (The bounds on a request's line and headers are the protocol's:
`verifier.serve.server.BoundedHttp`.)"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from verifier.serve.body import Refusal

access_log = logging.getLogger("verifier.serve.access")


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


class HotRoutes:
    """Requests that run one check (`routes.hot_route`: /v1/check and /run_code) go straight to
    their endpoint; every other request, and the lifespan, goes to FastAPI. The same endpoints
    and the same refusal answers as through FastAPI, without its routing and middleware stack:
    that stack cost ~0.4 ms of the server's CPU a request, on a machine whose sandboxes use the
    same cores (measured; `docs/performance.md`). An error other than a refusal is uvicorn's
    500, as through FastAPI's own error middleware."""

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        route: Callable[[str, str], Callable[[Request], Awaitable[Response]] | None],
        refused: Callable[[Refusal], Response],
    ) -> None:
        self.app = app
        self.route = route
        self.refused = refused

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        endpoint = self.route(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        try:
            response = await endpoint(Request(scope, receive, send))
        except Refusal as exc:
            response = self.refused(exc)
        await response(scope, receive, send)
