"""`Closing`: the one `with` protocol of everything that holds something until `close()`
(a verifier, a backend, a client, an agent's sandbox): the block's end closes it, however
the block ends."""

from __future__ import annotations

from typing import Self


class Closing:
    """A context manager whose exit is `close()`; `__enter__` returns the object itself."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
