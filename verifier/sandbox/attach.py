"""Docker's multiplexed attach stream (no TTY): frames of an 8-byte header (stream id, three
pad bytes, payload length) and the payload."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

from verifier.runner.protocol import read_exact

HEADER = struct.Struct(">BxxxL")
STDOUT, STDERR = 1, 2


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
