"""The evidence each principal made, for `GET /v1/evidence/{evidence_id}`.

An `evidence_id` is a digest of candidate, suite, image and limits, so two principals checking
the same candidate get the same id: records are kept per (principal, id), and a principal finds
only its own. Bounded (the least recently made go first) and in memory: a restart forgets them.
"""

from __future__ import annotations

from collections import OrderedDict

from verifier.evidence import Evidence


class EvidenceStore:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._records: OrderedDict[tuple[str, str], Evidence] = OrderedDict()

    def put(self, owner: str, evidence: Evidence) -> None:
        if self.capacity <= 0:
            return
        key = (owner, evidence.evidence_id)
        self._records[key] = evidence
        self._records.move_to_end(key)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)

    def get(self, owner: str, evidence_id: str) -> Evidence | None:
        return self._records.get((owner, evidence_id))

    def __len__(self) -> int:
        return len(self._records)
