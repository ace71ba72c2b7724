"""Running the app: uvicorn (its httptools protocol, with our bounds), signals, graceful shutdown.

- Bounds of a connection: `BoundedHttp` (below) gives every phase of a connection a deadline
  (headers, body, also a body left unread after its answer, an answer the client does not take,
  a closing connection) and caps the request line and headers (431 beyond); uvicorn has none of
  these (a client sending a byte a second would hold its connection for ever).
  `timeout_keep_alive` closes idle connections, `limit_concurrency` answers 503 past
  `max_connections`, and connections no token has authenticated yet have a smaller budget per
  peer address, so one address alone never reaches that 503. The route's own body bounds are
  `verifier.serve.body`'s.
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
from typing import Any, ClassVar, cast

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from verifier.serve.api import ErrorBody
from verifier.serve.app import create_app
from verifier.serve.config import ServeConfig, load_suites
from verifier.serve.engine import Engine
from verifier.serve.state import ServerState
from verifier.serve.tokens import TokenSource

log = logging.getLogger("verifier.serve")


def _answer(status: str, error: str, reason: str, extra: str = "") -> bytes:
    body = ErrorBody(error=error, reason=reason).model_dump_json().encode()  # type: ignore[arg-type]
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\n{extra}".encode()
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


_HEAD_LATE = _answer("408 Request Timeout", "slow_client", "the request headers did not arrive in time")
_BODY_LATE = _answer("408 Request Timeout", "slow_client", "the request body did not arrive in time")


def _too_large(limit: int) -> bytes:
    reason = f"the request line and headers are over this server's {limit}-byte limit"
    return _answer("431 Request Header Fields Too Large", "too_large", reason)


def _too_many(budget: int) -> bytes:
    reason = (
        f"this address has {budget} connections open that no token has authenticated yet, "
        "this server's limit: use them, or close some"
    )
    return _answer("429 Too Many Requests", "concurrency", reason, "retry-after: 1\r\n")


class _Watched(dict[str, Any]):
    """A request's `scope["state"]`, telling its connection when the app names the request's
    principal (`request.state.principal`, set by `checks.principal` once the token is proven)."""

    def __init__(self, base: dict[str, Any], on_principal: Callable[[], None]) -> None:
        super().__init__(base)
        self._on_principal = on_principal

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        if key == "principal":
            self._on_principal()


class _Lingering:
    """The connection's transport, whose `close()` also starts a deadline: a closing connection
    whose client does not take the last bytes is aborted (asyncio's `close()` waits for the write
    buffer to drain, for ever if the client never reads)."""

    def __init__(self, transport: asyncio.Transport, on_close: Callable[[], None]) -> None:
        self._transport = transport
        self._on_close = on_close

    def close(self) -> None:
        self._transport.close()
        self._on_close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BoundedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol (its C parser: a third less of the server's CPU a request than
    h11, measured), with the bounds uvicorn lacks. **Every byte a connection may still send, and
    every byte it must still take, has a deadline, in every phase**:

    - **head** (from the connection's start, or from its previous answer, or from the end of a
      body read after its answer): the next request's line and headers are complete within
      `header_timeout_s`, or 408 and closed. Their size is bounded too: over `max_header_bytes`,
      431 and closed. The bytes are counted as they arrive, before the parser sees them (httptools
      buffers a header that arrives in pieces without bound): the parser is fed at most the bytes
      left, so a body in the same read is never counted;
    - **body** (from the complete headers, whoever reads it, also after the request was answered
      without reading it: a 401, a GET with a body): the body is complete within
      `body_timeout_s` (plus a second, so that the route's own 408 normally answers first), or
      408 (when nothing was answered yet) and closed; its bytes as sent (chunked framing and
      trailers included) are at most twice `max_body_bytes` plus 64 KiB; a body left unread by an
      answer to an `Expect: 100-continue` request is not waited for (the connection closes);
    - **answer**: a client that stops taking the answer (the transport's buffer over its high
      mark) for `send_timeout_s` is cut off; a connection being closed whose client does not take
      its last bytes is aborted `send_timeout_s` later;
    - **idle**: uvicorn's `timeout_keep_alive`; a byte after it starts the head's deadline.

    And **who holds the connections**: a connection counts against its peer address's budget of
    connections not yet authenticated (`unauthenticated_per_peer`, smaller than
    `max_connections`) until a request on it is authenticated (`request.state.principal`);
    past the budget a new connection is answered 429 and closed. So one address without a
    token never holds the whole server: uvicorn's 503 at `max_connections` needs others.
    At most `max_pipelined` requests wait behind the one being answered; more close the
    connection. WebSocket upgrades are never taken (the server is started with `ws="none"`)."""

    header_timeout_s: ClassVar[float] = 10.0
    max_header_bytes: ClassVar[int] = 16 * 1024
    body_timeout_s: ClassVar[float] = 30.0
    max_body_bytes: ClassVar[int] = 16 * 1024 * 1024
    send_timeout_s: ClassVar[float] = 30.0
    #: Connections of one peer address not yet authenticated (0: no limit).
    unauthenticated_per_peer: ClassVar[int] = 0
    max_pipelined: ClassVar[int] = 16
    #: The peers' counts of connections not yet authenticated (one dict per server: `_protocol`).
    unauthenticated: ClassVar[dict[str, int]] = {}
    #: Called with "slow_client", "too_large" or "concurrency" when a connection is refused.
    on_refused: ClassVar[Callable[[str], None]] = staticmethod(lambda reason: None)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None
        self._linger: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._in_head = True
        self._body_bytes = 0  # bytes of the body being parsed, as sent
        self._expects = False
        self._peer: str | None = None
        self._overfull = False
        self._lost = False
        super().connection_made(cast(asyncio.Transport, _Lingering(transport, self._closing)))
        peer = self.client[0] if self.client else ""
        budget = self.unauthenticated_per_peer
        if budget and self.unauthenticated.get(peer, 0) >= budget:
            type(self).on_refused("concurrency")
            self._refuse(_too_many(budget))
            return
        self.unauthenticated[peer] = self.unauthenticated.get(peer, 0) + 1
        self._peer = peer
        self._arm(self.header_timeout_s, _HEAD_LATE)

    def data_received(self, data: bytes) -> None:
        while data and not self.transport.is_closing():
            if not self._in_head:
                self._body_bytes += len(data)
                if self._body_bytes > 2 * self.max_body_bytes + 65536:
                    type(self).on_refused("too_large")
                    self._refuse(self._unanswered(_too_large_body(self.max_body_bytes)))
                    return
                self._feed(data)
                return
            room = self.max_header_bytes - self._head_bytes
            if room <= 0:  # the line and headers are not complete, and no room is left
                type(self).on_refused("too_large")
                self._refuse(_too_large(self.max_header_bytes))
                return
            piece, data = data[:room], data[room:]
            self._head_bytes += len(piece)
            self._feed(piece)

    def _feed(self, data: bytes) -> None:
        super().data_received(data)  # a parser error is uvicorn's 400, and closed
        if self._overfull:
            self._abort()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope["state"] = _Watched(self.scope["state"], self._authenticated)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._body_bytes = 0
        self._expects = self.expect_100_continue
        super().on_headers_complete()
        if self.parser.should_upgrade():  # not taken (no WebSocket, no h2c): answered, then closed
            self.cycle.keep_alive = False
        if len(self.pipeline) > self.max_pipelined:
            self._overfull = True
            raise _TooManyPipelined  # out of the parser (whose error it becomes): then aborted
        if not self.pipeline:  # answered now (not waiting behind another): its body's deadline starts
            self._arm(self.body_timeout_s + 1.0, _BODY_LATE)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # the next request's line and headers are counted from here
        self._head_bytes = 0
        if self.cycle is not None and self.cycle.response_complete and not self.pipeline:
            self._arm(self.header_timeout_s, _HEAD_LATE)  # a body read after its answer: next head due
        else:
            self._disarm()  # the answer is ours to make now

    def on_response_complete(self) -> None:
        if self.cycle is not None and self.cycle.scope.get("state", {}).get("principal"):
            self._authenticated()
        waited = bool(self.pipeline)
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if waited:  # a pipelined request is answered now
            if self._in_head:
                self._disarm()  # its body is complete: the answer is ours to make
            else:
                self._arm(self.body_timeout_s + 1.0, _BODY_LATE)  # its body is due from here
        elif self._in_head:
            self._arm(self.header_timeout_s, _HEAD_LATE)  # the next request's headers are due
        elif self._expects:
            self.transport.close()  # the client waits for a 100 that will not come: its body is not ours
        # else: its body is still coming after the answer, under the deadline armed at its headers

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.send_timeout_s, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._release()
        super().connection_lost(exc)  # (which closes the transport: no linger is armed now)
        self._disarm()
        for timer in (self._stall, self._linger):
            if timer is not None:
                timer.cancel()
        self._stall = self._linger = None

    # -- bookkeeping ---------------------------------------------------------------------------
    def _authenticated(self) -> None:
        self._release()

    def _release(self) -> None:
        peer, self._peer = self._peer, None
        if peer is not None:
            left = self.unauthenticated.get(peer, 1) - 1
            if left > 0:
                self.unauthenticated[peer] = left
            else:
                self.unauthenticated.pop(peer, None)

    def _unanswered(self, answer: bytes) -> bytes:
        """`answer`, unless an answer is being written (it would be cut in two): then nothing."""
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            return answer
        return b""

    def _unsupported_upgrade_warning(self) -> None:
        pass  # an upgrade is answered as a plain request, then the connection closes (no log line per read)

    def _arm(self, seconds: float, answer: bytes) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired, answer)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self, answer: bytes) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            type(self).on_refused("slow_client")
            self._refuse(self._unanswered(answer))

    def _stalled(self) -> None:
        """The client took none of our answer for `send_timeout_s`: cut off."""
        self._stall = None
        type(self).on_refused("slow_client")
        self._abort()

    def _closing(self) -> None:
        self._disarm()
        if self._linger is None and not self._lost:
            self._linger = self.loop.call_later(self.send_timeout_s, self._abort)

    def _abort(self) -> None:
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app's next sends go nowhere
            self.cycle.message_event.set()
        self.transport.abort()

    def _refuse(self, answer: bytes) -> None:
        self._disarm()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app answers nothing more on this connection
            self.cycle.message_event.set()
        if answer:
            self.transport.write(answer)
        self.transport.close()


class _TooManyPipelined(Exception):
    """Raised from a parser callback: more requests wait behind the one answered than allowed."""


def _too_large_body(limit: int) -> bytes:
    reason = f"the body is over this server's {limit}-byte limit"
    return _answer("413 Content Too Large", "too_large", reason)


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
    http = config.http
    return type(
        "ServeProtocol",
        (BoundedHttp,),
        {
            "header_timeout_s": http.header_timeout_s,
            "max_header_bytes": http.max_header_bytes,
            "body_timeout_s": http.body_timeout_s,
            "max_body_bytes": http.max_body_bytes,
            "send_timeout_s": http.send_timeout,
            "unauthenticated_per_peer": http.unauthenticated_budget,
            "unauthenticated": {},
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
        ws="none",  # no WebSocket: an upgrade is answered as a plain request (BoundedHttp)
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
