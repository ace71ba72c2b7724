"""SARIF 2.1.0 for code scanning: one result per broken or failing test, at its file and line.

Rules are the review's classifications; a result's level is ``error`` when the test blocks
the review (broken, a failing added test, a new error, a missing test), ``warning`` for
tests that fail on both sides, ``note`` for flaky ones. ``partialFingerprints`` carry a
digest of the test id, so code scanning tracks one alert per test across pushes. Each rule has
its ``fullDescription`` and ``help``; the run names the tool's ``informationUri``, the
repository and commit (``versionControlProvenance``), and when and where the review ran.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from verifier._distribution import DISTRIBUTION
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

#: Each rule's full description and what to do about it (SARIF `fullDescription` and `help`).
HELP: dict[str, tuple[str, str]] = {
    TestClass.BROKEN.value: (
        "The repository's own test passed on the base commit and fails, errors or is skipped on the "
        "head, with the same test code on both sides: the change broke what it tests.",
        "Run the test on the head and fix the code (or, if the old behaviour was wrong, change the test "
        "in its own reviewed commit). This blocks the review.",
    ),
    TestClass.REWRITTEN.value: (
        "The change edits or removes this test, or what it sees (its module's other code, a conftest, "
        "the configuration, helpers), and the base's version of the test, run on both sides' code, "
        "passes on the base code and not on the head code: the change rewrote the judge that would "
        "have caught it.",
        "Run the base's version of the test on the head; restore it, or fix the code. This blocks the review.",
    ),
    TestClass.ADDED.value: (
        "A test the change adds (or that only the head collects) fails on the head code.",
        "Fix the new test or the code it tests. This blocks the review.",
    ),
    TestClass.ERROR.value: (
        "The test could not be collected, or its setup or teardown raised, on the head. It blocks when "
        "it is new; an error on both sides is reported, not blocking.",
        "Read the error on the head (an import error, a broken fixture) and fix it.",
    ),
    TestClass.MISSING.value: (
        "The test was collected but never reported: the test process exited, crashed or hit the time "
        "limit before it ran. A missing test is never counted as passed.",
        "Find what ended the run (the run's log tail in the JSON evidence), e.g. sys.exit or os._exit "
        "in the code under test, a crash, or a hang. This blocks the review.",
    ),
    TestClass.STILL_FAILING.value: (
        "The test fails on the base and on the head: the change neither caused nor fixed it.",
        "Not caused by this change; fix it separately.",
    ),
    TestClass.FLAKY.value: (
        "The test's outcome differed between its first run and its rerun on the same tree, in a fresh "
        "process: it is never counted as fixed or broken.",
        "Make the test deterministic (time, randomness, order, shared state between tests).",
    ),
}
#: Where to read about the tool (SARIF `informationUri`): the distribution's page on the package index.
INFORMATION_URI = f"https://pypi.org/project/{DISTRIBUTION}/"

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


def _rule(rid: str) -> dict[str, Any]:
    name, short = RULES[rid]
    full, advice = HELP[rid]
    return {
        "id": rid,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": f"{full} {advice}", "markdown": f"**{name}**: {full}\n\n{advice}"},
        "defaultConfiguration": {"level": _DEFAULT_LEVEL.get(rid, "error")},
    }


def _provenance(ev: ReviewEvidence) -> dict[str, Any]:
    """The repository and the commit the results are about (the head; for a patch, its base)."""
    commit = ev.head.commit or ev.base.commit
    found: dict[str, Any] = {"repositoryUri": ev.repository_uri or "file:///", "mappedTo": {"uriBaseId": "%SRCROOT%"}}
    if commit:
        found["revisionId"] = commit
    found["properties"] = {"baseCommit": ev.base.commit, "headTree": ev.head.tree, "patchSha256": ev.patch_sha256}
    return found


def _invocation(ev: ReviewEvidence) -> dict[str, Any]:
    out: dict[str, Any] = {"executionSuccessful": all(r.complete for r in ev.runs), "exitCode": 0 if ev.ok else 1}
    if ev.timings.started_at:
        out["startTimeUtc"] = ev.timings.started_at.replace("+00:00", "Z")
    if ev.hostname:
        out["machine"] = one_line(ev.hostname, 200)
    return out


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
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(rid) for rid in RULES],
                    }
                },
                "automationDetails": {"id": "verifier-review/"},
                "versionControlProvenance": [_provenance(ev)],
                "invocations": [_invocation(ev)],
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
