"""What a job's tests did: counts and failures, recorded by the trusted side only.

Shared by the pytest plugin (pytest_plugin.py) and the direct runner; no pytest import here,
so suites that do not use pytest never pay for it.
"""

from __future__ import annotations

import re
from typing import Any

from .proxy import CandidateSession

MAX_DETAIL = 4000
_EXAMPLE_START = re.compile(r"(?:Falsifying example|Failing test case): ?(.*)$")


def falsifying_example(detail: str) -> str | None:
    """Hypothesis' minimal failing call, as it printed it (pytest prefixes removed)."""
    lines = [re.sub(r"^E {0,3}", "", ln) for ln in detail.splitlines()]
    for i, line in enumerate(lines):
        m = _EXAMPLE_START.search(line)
        if not m:
            continue
        out = [m.group(1)]
        depth = m.group(1).count("(") - m.group(1).count(")")
        for nxt in lines[i + 1 :]:
            if depth <= 0:
                break
            out.append(nxt)
            depth += nxt.count("(") - nxt.count(")")
        return "\n".join(out).strip()[:MAX_DETAIL] or None
    return None


class Results:
    """Counts and failures of one job."""

    def __init__(self, session: CandidateSession) -> None:
        self.session = session
        self.collected: int | None = None
        self.outcomes: dict[str, str] = {}
        self.failures: list[dict[str, Any]] = []
        self.kinds: dict[str, str] = {}
        self.collect_errors = 0

    def fail(self, test_id: str, kind: str, message: str, detail: str) -> None:
        example = falsifying_example(detail)
        self.failures.append(
            {
                "test_id": test_id,
                "kind": kind,
                "message": message[:2000],
                "falsifying_example": example,
                "detail_untrusted": detail[-MAX_DETAIL:],
            }
        )

    def counts(self) -> dict[str, int]:
        values = list(self.outcomes.values())
        return {
            "expected": self.collected or 0,
            "passed": values.count("passed"),
            "failed": values.count("failed"),
            "errors": values.count("error") + self.collect_errors,
            "skipped": values.count("skipped"),
        }
