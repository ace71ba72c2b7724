"""SARIF 2.1.0 for code scanning: one result per broken or failing test, at its file and line.

Rules are the review's classifications; a result's level is ``error`` when the test blocks
the review (broken, a failing added test, a new error, a missing test), ``warning`` for
tests that fail on both sides, ``note`` for flaky ones. ``partialFingerprints`` carry a
digest of the test id, so code scanning tracks one alert per test across pushes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from verifier.review.review_evidence import BAD, Outcome, ReviewEvidence, TestClass, TestRow
from verifier.text import one_line

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

RULES: dict[str, tuple[str, str]] = {
    TestClass.BROKEN.value: ("Regression", "The test passed on the base and does not pass on the head."),
    TestClass.REWRITTEN.value: (
        "RewrittenJudge",
        "The change edits or removes this test (or what it sees), and the base's version of it, "
        "which passes on the base code, does not pass on the head code.",
    ),
    TestClass.ADDED.value: ("FailingNewTest", "A test only the head has (added by the change) fails."),
    TestClass.ERROR.value: ("TestError", "The test errors in collection, setup or teardown on the head."),
    TestClass.MISSING.value: ("MissingTest", "The run ended before this test reported (crash, exit, time limit)."),
    TestClass.STILL_FAILING.value: ("StillFailing", "The test fails on the base and on the head."),
    TestClass.FLAKY.value: ("FlakyTest", "The test's outcome changed when it was rerun on the same tree."),
}

_DEFAULT_LEVEL = {TestClass.STILL_FAILING.value: "warning", TestClass.FLAKY.value: "note"}


def _reported(row: TestRow) -> bool:
    if row.classification.value not in RULES:
        return False
    if row.blocking or row.classification is TestClass.FLAKY:
        return True
    return row.head is not None and row.head.outcome in BAD


def _level(row: TestRow) -> str:
    if row.blocking:
        return "error"
    return "note" if row.classification is TestClass.FLAKY else "warning"


def render(ev: ReviewEvidence) -> str:
    return json.dumps(document(ev), indent=2)


def document(ev: ReviewEvidence) -> dict[str, Any]:
    rule_ids = list(RULES)
    results: list[dict[str, Any]] = []
    for row in ev.tests:
        if not _reported(row):
            continue
        side = row.head if row.head and row.head.outcome is not Outcome.MISSING else row.base
        detail = one_line(side.message_untrusted, 300) if side and side.message_untrusted else ""
        why = row.note or row.classification.value
        text = f"{RULES[row.classification.value][0]}: {one_line(row.test_id, 300)} ({why})"
        if detail:
            text += f": {detail}"
        result: dict[str, Any] = {
            "ruleId": row.classification.value,
            "ruleIndex": rule_ids.index(row.classification.value),
            "level": _level(row),
            "message": {"text": text},
            "partialFingerprints": {"verifierTestId/v1": hashlib.sha256(row.test_id.encode()).hexdigest()},
            "properties": {
                "testId": row.test_id,
                "provenance": row.provenance.value,
                "base": row.base.outcome.value if row.base else None,
                "head": row.head.outcome.value if row.head else None,
            },
        }
        if row.file:
            location: dict[str, Any] = {
                "artifactLocation": {"uri": quote(row.file, safe="/"), "uriBaseId": "%SRCROOT%"}
            }
            if row.line:
                location["region"] = {"startLine": row.line}
            result["locations"] = [{"physicalLocation": location}]
        results.append(result)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "verifier review",
                        "version": ev.verifier_version,
                        "rules": [
                            {
                                "id": rid,
                                "name": name,
                                "shortDescription": {"text": desc},
                                "defaultConfiguration": {"level": _DEFAULT_LEVEL.get(rid, "error")},
                            }
                            for rid, (name, desc) in RULES.items()
                        ],
                    }
                },
                "automationDetails": {"id": "verifier-review/"},
                "invocations": [
                    {
                        "executionSuccessful": all(r.complete for r in ev.runs),
                        "exitCode": 0 if ev.ok else 1,
                    }
                ],
                "results": results,
                "properties": {
                    "reviewId": ev.review_id,
                    "ok": ev.ok,
                    "reason": ev.reason,
                    "baseTree": ev.base.tree,
                    "headTree": ev.head.tree,
                    "testsMode": ev.tests_mode,
                    "isolation": ev.isolation,
                },
            }
        ],
    }
