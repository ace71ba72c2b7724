"""ASGI middleware of the server: its own access log (tokens redacted) and the bound on the size
of a request's line and headers."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from verifier.serve.api import ErrorBody

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
