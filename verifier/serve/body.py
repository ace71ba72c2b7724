"""Request bodies, bounded in size and in time, read before anything else is done with them.

A request holds no sandbox, thread or slot until its body is complete and checked: a client
that sends too much is refused as soon as it says so (Content-Length) or sends it (413), and
one that sends slowly (one byte a second) is cut off at the deadline (408), whatever it sends.
The bytes a body holds are also counted against its principal's share of the server as they
arrive (`hold`: `checks.parsed`), so many bodies at once are bounded as one is.
Headers have their own bounds in `verifier.serve.server` (size, time to complete them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from verifier.errors import VerifierError
from verifier.serve.api import ErrorCode


class Refusal(VerifierError):
    """A request refused before any check: its HTTP status, error code and reason (trusted)."""

    def __init__(
        self, status: int, error: ErrorCode, reason: str, *, retry_after: int | None = None, close: bool = False
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.error: ErrorCode = error
        self.reason = reason
        self.retry_after = retry_after
        #: The connection is closed after the answer (the rest of a body is not read).
        self.close = close or status in (408, 413)


def declared_length(value: str | None, max_bytes: int) -> None:
    """Refuse a Content-Length over `max_bytes` (or not a number) before reading anything."""
    if value is None:
        return
    try:
        length = int(value)
    except ValueError:
        raise Refusal(400, "invalid", "Content-Length is not a number") from None
    if length > max_bytes:
        raise Refusal(413, "too_large", f"the body is {length} bytes, over this server's {max_bytes}-byte limit")


async def read_body(
    chunks: AsyncIterator[bytes], *, max_bytes: int, timeout_s: float, hold: Callable[[int], None] | None = None
) -> bytes:
    """The whole body from `chunks` (an ASGI request's stream), or Refusal: 413 past `max_bytes`,
    408 when it is not complete within `timeout_s` of the headers, or what `hold` raises (it is
    told each piece's size before the piece is kept)."""
    parts: list[bytes] = []
    size = 0

    async def pull() -> None:
        nonlocal size
        async for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise Refusal(413, "too_large", f"the body is over this server's {max_bytes}-byte limit")
            if hold is not None:
                hold(len(chunk))
            parts.append(chunk)

    try:
        await asyncio.wait_for(pull(), timeout_s)
    except TimeoutError:
        raise Refusal(
            408, "slow_client", f"the body did not arrive within {timeout_s:g} s ({size} bytes came)"
        ) from None
    return b"".join(parts)
