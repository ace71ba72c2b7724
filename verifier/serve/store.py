"""What the server keeps in memory for its clients, bounded in bytes: the evidence each principal
made (`EvidenceStore`, for `GET /v1/evidence/{evidence_id}`), the answers waiting for a client
to read them (`AnswerBudget`: a batch's lines, and every other answer while it is being sent) and
the request bodies held by requests in progress (`HeldBytes`).

An `evidence_id` is a digest of candidate, suite, image and limits, so two principals checking
the same candidate get the same id: records are kept per (principal, id), and a principal finds
only its own. Bounded in count and in bytes, per principal and in all (the least recently made go
first), and in memory: a restart forgets them. A record's large outputs (a program's stdout and
stderr, which a `/run_code` answer carries whole) are kept cut, with the length and SHA-256 of
the whole text, so a store of many records holds little of any one.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from typing import Literal

from verifier.evidence import Evidence


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters followed by a line that says how long the whole
    was and its SHA-256 (of its UTF-8 bytes)."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return text[:limit] + f"\n[cut by the server's evidence store: {len(text)} characters in all, sha256 {digest}]"


def kept(evidence: Evidence, limit: int) -> Evidence:
    """`evidence` as a store keeps it: every candidate-written text over `limit` characters cut
    (`cut`). Everything else, `ok` and the status included, is the evidence's own."""
    cases = [
        case.model_copy(
            update={
                "stdout_untrusted": None if case.stdout_untrusted is None else cut(case.stdout_untrusted, limit),
                "stderr_untrusted": None if case.stderr_untrusted is None else cut(case.stderr_untrusted, limit),
                # A fetched file over the limit keeps its path, size and sha256, not its content.
                "files": [
                    f
                    if f.content_b64_untrusted is None or len(f.content_b64_untrusted) <= limit
                    else f.model_copy(update={"content_b64_untrusted": None})
                    for f in case.files
                ],
            }
        )
        for case in evidence.cases
    ]
    failures = [f.model_copy(update={"detail_untrusted": cut(f.detail_untrusted, limit)}) for f in evidence.failures]
    return evidence.model_copy(
        update={
            "cases": cases,
            "failures": failures,
            "candidate_output_untrusted": cut(evidence.candidate_output_untrusted, limit),
        }
    )


def size_of(evidence: Evidence) -> int:
    """What a record costs: its JSON's length (the text it holds, and a little more)."""
    return len(evidence.model_dump_json())


class OwnerBytes:
    """Bytes counted per principal and in all (`bytes`, a gauge): the one tally of the server's
    stores and budgets. A principal whose count falls to nothing is forgotten."""

    def __init__(self) -> None:
        #: Bytes counted now, of every principal.
        self.bytes = 0
        self._owner_bytes: dict[str, int] = {}

    def owner_bytes(self, owner: str) -> int:
        return self._owner_bytes.get(owner, 0)

    def _count(self, owner: str, size: int) -> None:
        """Count `size` more bytes of `owner` (fewer when negative)."""
        self.bytes += size
        left = self._owner_bytes.get(owner, 0) + size
        if left > 0:
            self._owner_bytes[owner] = left
        else:
            self._owner_bytes.pop(owner, None)


class EvidenceStore(OwnerBytes):
    """At most `capacity` records and `max_bytes` of them in all, `max_bytes_per_owner` of one
    principal; each record's candidate-written texts cut at `output_chars` (`kept`)."""

    def __init__(
        self,
        capacity: int,
        *,
        max_bytes: int = 256 * 1024 * 1024,
        max_bytes_per_owner: int = 64 * 1024 * 1024,
        output_chars: int = 64 * 1024,
    ) -> None:
        super().__init__()
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.max_bytes_per_owner = max_bytes_per_owner
        self.output_chars = output_chars
        self._records: OrderedDict[tuple[str, str], tuple[Evidence, int]] = OrderedDict()
        self._owners: dict[str, OrderedDict[str, None]] = {}

    def put(self, owner: str, evidence: Evidence) -> None:
        if self.capacity <= 0:
            return
        record = kept(evidence, self.output_chars)
        size = size_of(record)
        if size > min(self.max_bytes, self.max_bytes_per_owner):
            return  # never kept: it alone is over a bound
        self._drop(owner, record.evidence_id)
        self._records[(owner, record.evidence_id)] = (record, size)
        self._owners.setdefault(owner, OrderedDict())[record.evidence_id] = None
        self._count(owner, size)
        while self.owner_bytes(owner) > self.max_bytes_per_owner:
            self._drop(owner, next(iter(self._owners[owner])))
        while len(self._records) > self.capacity or self.bytes > self.max_bytes:
            oldest_owner, oldest_id = next(iter(self._records))
            self._drop(oldest_owner, oldest_id)

    def get(self, owner: str, evidence_id: str) -> Evidence | None:
        found = self._records.get((owner, evidence_id))
        return found[0] if found is not None else None

    def __len__(self) -> int:
        return len(self._records)

    def _drop(self, owner: str, evidence_id: str) -> None:
        found = self._records.pop((owner, evidence_id), None)
        if found is None:
            return
        self._count(owner, -found[1])
        ids = self._owners[owner]
        del ids[evidence_id]
        if not ids:
            del self._owners[owner]


class AnswerBudget(OwnerBytes):
    """Bytes of answers made and not yet taken by their clients (a batch's lines), at most
    `max_bytes` in all and `max_bytes_per_owner` of one principal. A batch starts its next item
    only when its principal and the server are under their bounds (`room`), so a client that does
    not read stops its own batch, holding at most the bound plus the answers of the checks it
    had running; the answers it has not taken are given back (`give`) when it reads them or goes."""

    def __init__(self, *, max_bytes: int, max_bytes_per_owner: int) -> None:
        super().__init__()  # bytes: of answers waiting for their clients now
        self.max_bytes = max_bytes
        self.max_bytes_per_owner = max_bytes_per_owner
        self._waiters: list[asyncio.Future[None]] = []  # one a batch at most: woken on every give

    def has_room(self, owner: str) -> bool:
        return self.bytes < self.max_bytes and self.owner_bytes(owner) < self.max_bytes_per_owner

    async def room(self, owner: str) -> None:
        """Return when `owner` and the server are under their bounds."""
        while not self.has_room(owner):
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def take(self, owner: str, size: int) -> None:
        self._count(owner, size)

    def give(self, owner: str, size: int) -> None:
        self._count(owner, -size)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


class HeldBytes(OwnerBytes):
    """Bytes held by requests in progress (their bodies, from the first byte read until the request
    is answered), at most `max_bytes` in all and `max_bytes_per_owner` of one principal. Never
    waits: a request whose next bytes do not fit is refused by its caller (`take` says which
    bound they would pass)."""

    def __init__(self, *, max_bytes: int, max_bytes_per_owner: int) -> None:
        super().__init__()  # bytes: held now
        self.max_bytes = max_bytes
        self.max_bytes_per_owner = max_bytes_per_owner

    def take(self, owner: str, size: int) -> Literal["owner", "all"] | None:
        """Count `size` more bytes of `owner`; or, when they do not fit, count nothing and say which
        bound they would pass ("owner" first: a principal over its own bound is its own fault)."""
        if self.owner_bytes(owner) + size > self.max_bytes_per_owner:
            return "owner"
        if self.bytes + size > self.max_bytes:
            return "all"
        self._count(owner, size)
        return None

    def give(self, owner: str, size: int) -> None:
        self._count(owner, -size)

    def lease(self, owner: str) -> Lease:
        return Lease(self, owner)


class Lease:
    """What one request holds in a `HeldBytes`: grown as its body arrives, given back once
    (`release`, also when it is called again)."""

    def __init__(self, budget: HeldBytes, owner: str) -> None:
        self.budget = budget
        self.owner = owner
        self.size = 0

    def grow(self, size: int) -> Literal["owner", "all"] | None:
        over = self.budget.take(self.owner, size)
        if over is None:
            self.size += size
        return over

    def release(self) -> None:
        size, self.size = self.size, 0
        if size:
            self.budget.give(self.owner, size)
