"""Running the app: uvicorn (its httptools protocol, with our bounds), signals, graceful shutdown.

- Bounds of a connection: `BoundedHttp` (below) caps the request line and headers (431 beyond)
  and closes a connection whose headers are not complete in time (uvicorn has neither bound: a
  client sending a byte a second would hold its connection for ever), `timeout_keep_alive`
  closes idle connections, `limit_concurrency` answers 503 past `max_connections`. The body's
  bounds are the app's (`verifier.serve.body`).
- Logs: uvicorn's access log is off (it prints URLs, and /t/TOKEN/run_code carries a token); the
  app logs each request with the token redacted (`verifier.serve.app.AccessLog`).
- SIGTERM or Ctrl-C: the server stops accepting at once (its socket closes), `/healthz` says
  stopping and new checks get 503; requests in flight get `shutdown_s` to finish, then are
  cancelled; then every container is removed (`Engine.close`), also after a second Ctrl-C.
- SIGHUP: the token file is read again (it is also read whenever it changes).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, ClassVar

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from verifier.serve.api import ErrorBody
from verifier.serve.app import create_app
from verifier.serve.config import ServeConfig, load_suites
from verifier.serve.engine import Engine
from verifier.serve.state import ServerState
from verifier.serve.tokens import TokenSource

log = logging.getLogger("verifier.serve")

_TIMEOUT_BODY = b'{"error":"slow_client","reason":"the request headers did not arrive in time"}'
_TIMEOUT_ANSWER = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n\r\n" + _TIMEOUT_BODY
)


def _too_large(limit: int) -> bytes:
    reason = f"the request line and headers are over this server's {limit}-byte limit"
    body = ErrorBody(error="too_large", reason=reason).model_dump_json().encode()
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
        b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


class BoundedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol (its C parser: a third less of the server's CPU a request than
    h11, measured), with the two bounds uvicorn lacks:

    - **size**: a request's line and headers over `max_header_bytes` get 431 and the connection
      is closed. The bytes are counted as they arrive, before the parser sees them (httptools
      buffers a header that arrives in pieces without bound): the parser is fed at most the
      bytes left, so a body in the same read is never counted;
    - **time**: from the connection's start, or from its previous answer, the next request's line
      and headers must be complete within `header_timeout_s`, or it gets 408 and is closed.

    Bytes of a pipelined request that begins inside the piece that ended the previous one are
    not counted (at most `max_header_bytes` more: a request begun inside the bytes fed last)."""

    header_timeout_s: ClassVar[float] = 10.0
    max_header_bytes: ClassVar[int] = 16 * 1024
    #: Called with "slow_client" or "too_large" when a connection is refused for its headers.
    on_refused: ClassVar[Callable[[str], None]] = staticmethod(lambda reason: None)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._in_head = True
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        while data:
            if not self._in_head:
                super().data_received(data)
                return
            room = self.max_header_bytes - self._head_bytes
            if room <= 0:  # the line and headers are not complete, and no room is left
                type(self).on_refused("too_large")
                self._refuse(_too_large(self.max_header_bytes))
                return
            piece, data = data[:room], data[room:]
            self._head_bytes += len(piece)
            super().data_received(piece)
            if self.transport.is_closing():
                return

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # the next request's line and headers are counted from here
        self._head_bytes = 0

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._in_head and not self.transport.is_closing():
            self._arm()  # the next request's headers are due

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            type(self).on_refused("slow_client")
            self._refuse(_TIMEOUT_ANSWER)

    def _refuse(self, answer: bytes) -> None:
        self._disarm()
        self.transport.write(answer)
        self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, telling the app at once that it is stopping (before in-flight requests
    are waited for), so that new checks are refused meanwhile."""

    def __init__(self, config: uvicorn.Config, state: ServerState) -> None:
        super().__init__(config)
        self._state = state

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._state.stopping = True
        super().handle_exit(sig, frame)


def listen(host: str, port: int) -> socket.socket:
    """The server's listening socket (bound here, so that port 0 gives a port the caller can read)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def build(config: ServeConfig, *, ray: str | None = None, image: str | None = None) -> tuple[ServerState, Any]:
    """The app of `config` (its suites loaded and its token file read now, so a mistake in either
    is reported before anything listens). Raises ConfigError or TokenError."""
    suites = load_suites(config)
    tokens = TokenSource(config.tokens)
    state = ServerState(
        config=config,
        suites=suites,
        tokens=tokens,
        make_engine=lambda: Engine(config, image=image, ray=ray),
    )
    return state, create_app(state)


def _protocol(config: ServeConfig, state: ServerState) -> type[BoundedHttp]:
    """BoundedHttp with this server's bounds (uvicorn makes the protocol from a class)."""
    refused = state.metrics.refused
    return type(
        "ServeProtocol",
        (BoundedHttp,),
        {
            "header_timeout_s": config.http.header_timeout_s,
            "max_header_bytes": config.http.max_header_bytes,
            "on_refused": staticmethod(lambda reason: refused.labels(reason).inc()),
        },
    )


def serve(
    config: ServeConfig,
    *,
    ray: str | None = None,
    image: str | None = None,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> None:
    """Run the server until SIGTERM or Ctrl-C; every container is removed before it returns."""
    state, app = build(config, ray=ray, image=image)
    sock = listen(config.host, config.port)
    host, port = sock.getsockname()[:2]
    http = config.http
    uv_config = uvicorn.Config(
        app,
        http=_protocol(config, state),
        lifespan="on",
        access_log=False,
        log_level="info",
        timeout_keep_alive=max(1, round(http.keep_alive_s)),
        limit_concurrency=http.max_connections,
        timeout_graceful_shutdown=max(0, round(config.shutdown_s)),
        server_header=False,
        proxy_headers=False,  # no client address is used: a forwarded header is nobody's word here
    )
    server = _Server(uv_config, state)
    say(f"verifier serve: listening on http://{host}:{port} ({len(state.suites)} suites, policy {config.policy})")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if state.engine is not None and not state.engine.closing:  # a second Ctrl-C skipped the lifespan's end
            state.engine.close()
