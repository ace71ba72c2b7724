"""How far a job has come, told to the host as it runs (protocol: `format_progress_line`).

Trusted code only counts here; the host shows the count (a terminal's `verifier check`) and
never judges by it. Lines go at most every `PROGRESS_INTERVAL_S`, plus the first (the total)
and the last (done == total), so a suite of thousands of quick tests costs a few lines a second.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .protocol import PROGRESS_INTERVAL_S

#: Sends (done, total) to the host.
Send = Callable[[int, int], None]


class Progress:
    """Tests (or cases) done of those collected; silent when the job did not ask (`send` None)."""

    def __init__(self, send: Send | None = None, interval_s: float = PROGRESS_INTERVAL_S) -> None:
        self._send, self._interval = send, interval_s
        self.done, self.total = 0, 0
        self._last = float("-inf")

    def collected(self, total: int) -> None:
        self.total = total
        self._tell(force=True)

    def one_done(self) -> None:
        self.done = min(self.done + 1, self.total)
        self._tell(force=self.done == self.total)

    def _tell(self, *, force: bool) -> None:
        if self._send is None:
            return
        now = time.monotonic()
        if force or now - self._last >= self._interval:
            self._last = now
            self._send(self.done, self.total)
