"""Docker's multiplexed attach stream (no TTY): frames of an 8-byte header (stream id, three
pad bytes, payload length) and the payload."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

from verifier.runner.protocol import read_exact

HEADER = struct.Struct(">BxxxL")
STDOUT, STDERR = 1, 2


class Stream:
    """The socket of an attach (or exec start) the Docker SDK hands over, and its release.

    The SDK gives the `SocketIO` of the HTTP response, whose `_sock` is the socket. A socket
    with a `SocketIO` (a `makefile`) still open stays open after its own `close()`: the file
    descriptor goes only when the last wrapper closes, which without this would be whenever
    the garbage collector reaches the response. `close()` closes every layer, so closing a
    container or an exec frees its connection to the engine there and then.
    """

    def __init__(self, raw: Any) -> None:
        self._raw = raw  # the SDK's wrapper: holding it keeps the response (and the socket) alive
        self.sock: socket.socket = getattr(raw, "_sock", raw)

    def close(self) -> None:
        response = getattr(self._raw, "_response", None)
        for layer in (self.sock, self._raw, response):
            try:
                if layer is not None:
                    layer.close()
            except (OSError, ValueError):
                pass


def pieces(sock: socket.socket, chunk: int = 1 << 16) -> Iterator[tuple[int, bytes]]:
    """(stream id, bytes) as they arrive, until the stream ends or breaks.

    A frame's payload may come in several pieces, so a flood is read in bounded chunks
    and never held whole.
    """
    try:
        while True:
            kind, size = HEADER.unpack(read_exact(sock.recv, HEADER.size))
            while size:
                piece = sock.recv(min(size, chunk))
                if not piece:
                    return
                size -= len(piece)
                yield kind, piece
    except (EOFError, OSError, struct.error):
        return
