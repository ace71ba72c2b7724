"""What each principal may spend: checks at once, checks per second, checks per UTC day.

Pure bookkeeping on the event loop's thread (no locks), with the clock passed in, so the rules
are unit-tested without a server. The limits are read from the principal's current `TokenSpec`
at each use, so a token file reloaded with new limits applies them at once; the counts belong
to the principal's name and survive a reload (and a token's rotation).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import dataclass, field

from verifier.serve.tokens import TokenSpec

DAY_S = 86400


def seconds_to_utc_midnight(now: float | None = None) -> int:
    """Whole seconds until the next UTC day begins (when daily quotas start again). Unix time
    has no leap seconds: every UTC day is 86,400 of its seconds."""
    moment = time.time() if now is None else now
    return max(1, math.ceil((utc_day(moment) + 1) * DAY_S - moment))


def utc_day(now: float | None = None) -> int:
    """The UTC day `now` falls in (days since 1970-01-01), counted on every check: arithmetic, not
    a calendar."""
    return int((time.time() if now is None else now) // DAY_S)


@dataclass
class Bucket:
    """A token bucket: `rate` checks a second on average, `burst` at once. Taking more than is
    there is allowed (a reservation): the answer says how long to wait for it."""

    level: float = math.inf
    at: float = 0.0

    def take(self, spec: TokenSpec, now: float, n: int = 1, *, reserve: bool) -> float:
        """Seconds until `n` may start (0: now, and taken). With `reserve`, they are taken even when
        that is later (the caller waits); without, nothing is taken unless they may start now."""
        self.level = min(float(spec.burst), self.level + (now - self.at) * spec.rate_per_s)
        self.at = now
        wait = max(0.0, (n - self.level) / spec.rate_per_s)
        if wait == 0.0 or reserve:
            self.level -= n
        return wait


@dataclass
class ClientState:
    """One principal's counts."""

    name: str
    running: int = 0
    day: int = -1
    used: int = 0
    bucket: Bucket = field(default_factory=Bucket)
    #: Checks waiting to start (a batch's items), first come first served; each ended check
    #: wakes one, never all of them (a batch of ten thousand would wake ten thousand).
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)

    # -- daily quota -------------------------------------------------------------------------
    def charge(self, spec: TokenSpec, n: int, now: float) -> bool:
        """Count `n` checks against today's quota; False (nothing counted) when they do not fit."""
        today = utc_day(now)
        if today != self.day:
            self.day, self.used = today, 0
        if self.used + n > spec.daily_quota:
            return False
        self.used += n
        return True

    def refund(self, n: int) -> None:
        """Give back checks counted but never started (a batch whose client went away)."""
        self.used = max(0, self.used - n)

    # -- concurrency -------------------------------------------------------------------------
    def try_start(self, spec: TokenSpec) -> bool:
        if self.running >= spec.concurrency:
            return False
        self.running += 1
        return True

    async def start(self, spec: TokenSpec) -> None:
        """Wait (in arrival order) until one more check of this principal may run, then count it."""
        if not self.waiters and self.try_start(spec):
            return
        front = False
        while True:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if front:  # woken before, but the room was gone (a lowered limit): keep its place
                self.waiters.appendleft(waiter)
            else:
                self.waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_next()  # woken, then cancelled: the turn goes to the next one
                elif waiter in self.waiters:
                    self.waiters.remove(waiter)
                raise
            if self.try_start(spec):
                if self.running < spec.concurrency:
                    self._wake_next()  # room for more (its limit was raised meanwhile)
                return
            front = True

    def done(self) -> None:
        self.running -= 1
        self._wake_next()

    def _wake_next(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


class Clients:
    """Every principal's state, by name (made on first use)."""

    def __init__(self) -> None:
        self._states: dict[str, ClientState] = {}

    def state(self, spec: TokenSpec) -> ClientState:
        found = self._states.get(spec.name)
        if found is None:
            found = self._states[spec.name] = ClientState(spec.name)
        return found
