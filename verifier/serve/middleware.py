"""ASGI middleware of the server: its own access log (tokens redacted) and the short way of the
requests that run one check. (The bounds on a request's line and headers are the protocol's:
`verifier.serve.server.BoundedHttp`.)"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from verifier.serve.body import Refusal
from verifier.serve.checks import HELD
from verifier.text import one_line, visible

access_log = logging.getLogger("verifier.serve.access")


#: Any run of characters a token may be made of, as long as the shortest token
#: (`tokens.TOKEN_SHAPE`): whatever the path's form (`//t/TOKEN`, `/./t/TOKEN`, `/t/TOKEN;x`,
#: percent-encoded), a token in it is such a run. Evidence ids (64 hex digits) are redacted too.
_TOKEN_LIKE = re.compile(r"[A-Za-z0-9._~-]{16,}")
#: The longest path a log line shows (the rest is cut: a line is not the client's to fill).
MAX_LOGGED_PATH = 300


def redacted(path: str) -> str:
    """A path as the logs show it: every control or invisible character escaped (a path cannot
    write a line of its own), and every run of characters that could be a token, wherever it
    stands, shown as ``<token>``: no token reaches a log, whatever the path's shape."""
    shown = _TOKEN_LIKE.sub("<token>", visible(path, keep_newlines=False))  # redacted before it is cut
    return shown if len(shown) <= MAX_LOGGED_PATH else shown[:MAX_LOGGED_PATH] + " [truncated]"


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
                one_line(str(scope.get("method")), 20),
                redacted(scope.get("path", "")),
                status["code"] or "-",
                who,
                time.monotonic() - started,
            )


class ReleaseHeld:
    """Gives back what a request held (`checks.HELD`: its body's lease) once it is answered, its
    answer sent or streamed to its end, or it failed or was cancelled."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            for lease in scope.pop(HELD, ()):
                lease.release()


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
