"""Report formats: SARIF 2.1.0 against its official schema, JUnit that parses, one bounded PR comment."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

from tests.review.fake_evidence import every_class, evidence, row
from verifier.review.reports import junit, markdown, render
from verifier.review.review_evidence import Outcome, ReviewEvidence, TestClass, review_json_schema

SARIF_SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"


def assert_valid_sarif(ev: ReviewEvidence) -> dict[str, object]:
    doc = json.loads(render("sarif", ev))
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(doc)
    return doc


def test_sarif_is_valid_and_has_one_result_per_broken_or_failing_test() -> None:
    doc = assert_valid_sarif(evidence(every_class(), edited=["tests/test_a.py::test_rigged"]))
    results = doc["runs"][0]["results"]  # type: ignore[index]
    by_rule = {r["ruleId"]: r for r in results}
    assert set(by_rule) == {"broken", "added", "still_failing", "flaky", "error", "missing"}
    broken = by_rule["broken"]
    assert broken["level"] == "error"
    loc = broken["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "tests/test_a.py" and loc["region"]["startLine"] == 3
    assert by_rule["still_failing"]["level"] == "warning" and by_rule["flaky"]["level"] == "note"


def test_sarif_stays_valid_with_hostile_test_ids() -> None:
    ids = ["tests/test a.py::test_[\u202e]", "tests/t.py::test_x[\x1b[31m]", "tests/%2e%2e.py::t[\ud800]"]
    rows = [
        row(i, TestClass.BROKEN, Outcome.PASSED, Outcome.FAILED, blocking=True, excerpt="\x00\x1b]0;x\x07") for i in ids
    ]
    doc = assert_valid_sarif(evidence(rows))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]]  # type: ignore[index]
    assert uris[0] == "tests/test%20a.py"


def test_junit_parses_and_maps_outcomes() -> None:
    root = ET.fromstring(junit.render(evidence(every_class())))
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert "test_gone" not in cases  # removed tests did not run on the head
    assert cases["test_broken"].find("failure") is not None
    assert cases["test_late"].find("error") is not None
    assert cases["test_flaky"].find("skipped") is not None  # flaky never counts as broken
    assert suite.get("failures") == "3" and suite.get("errors") == "2"
    assert cases["test_broken"].get("classname") == "tests.test_a"


def test_junit_has_each_test_s_time_and_the_suite_s_timestamp_and_hostname() -> None:
    """Attacks: no per-test `time`, no suite `timestamp` / `hostname` (CI reporters show them)."""
    suite = ET.fromstring(junit.render(evidence(every_class()))).find("testsuite")
    assert suite is not None
    assert suite.get("timestamp") == "2026-01-02T03:04:05+00:00" and suite.get("hostname") == "ci-runner-1"
    assert {c.get("time") for c in suite.iter("testcase")} == {"0.250"}


def test_sarif_names_the_tool_s_home_each_rule_s_help_and_the_commit() -> None:
    """Attacks: no `informationUri`, no rule `help` / `fullDescription`, no `versionControlProvenance`."""
    run = assert_valid_sarif(evidence(every_class()))["runs"][0]  # type: ignore[index]
    assert run["tool"]["driver"]["informationUri"] == "https://pypi.org/project/sandboxed-verifier/"
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["fullDescription"]["text"] and rule["help"]["text"] and rule["help"]["markdown"]
    (vcs,) = run["versionControlProvenance"]
    assert vcs["repositoryUri"] == "https://example.invalid/org/repo" and vcs["revisionId"] == "3" * 40
    assert vcs["mappedTo"] == {"uriBaseId": "%SRCROOT%"}
    assert run["invocations"][0]["startTimeUtc"] == "2026-01-02T03:04:05Z"


def test_markdown_verdict_first_and_the_judge_edit_called_out() -> None:
    text = markdown.render(evidence(every_class(), edited=["tests/test_a.py::test_rigged"]))
    lines = text.splitlines()
    assert lines[0].startswith("## ❌ verifier review: NOT OK")
    assert "This change edits its own judge" in text and "`tests/test_a.py::test_rigged`" in text
    assert text.index("### Regressions") < text.index("### Fixed") < text.index("<summary>Evidence</summary>")


def test_markdown_stays_under_the_cap_for_a_huge_suite() -> None:
    excerpt = "\n".join(f"E   assert {'x' * 150} == {i}" for i in range(40))
    broken = TestClass.BROKEN
    rows = [
        row(
            f"tests/t{i // 100}.py::test_{i}[{'p' * 120}]",
            broken,
            Outcome.PASSED,
            Outcome.FAILED,
            blocking=True,
            excerpt=excerpt,
        )
        for i in range(5000)
    ]
    rows += [
        row(f"tests/test_f.py::test_fixed_{i}", TestClass.FIXED, Outcome.FAILED, Outcome.PASSED) for i in range(3000)
    ]
    text = markdown.render(evidence(rows))
    assert len(text) <= markdown.MAX_CHARS
    assert "… and" in text and "more (the JSON and SARIF reports list every test)" in text
    assert text.rstrip().endswith("</details>")  # the hashes are never cut off
    assert text.count("```") % 2 == 0  # every fence is closed


def test_markdown_cannot_be_formatted_by_the_repository() -> None:
    nasty = "tests/t.py::test_x[`` <img src=x onerror=alert(1)> @everyone ```\n# heading]"
    excerpt = "```\n</details>\n# injected heading\n\x1b[2J"
    text = markdown.render(
        evidence([row(nasty, TestClass.BROKEN, Outcome.PASSED, Outcome.FAILED, blocking=True, excerpt=excerpt)])
    )
    assert "\x1b" not in text and "\n# injected" not in text and "\n# heading" not in text
    item = next(ln for ln in text.splitlines() if "onerror" in ln)
    assert item.startswith("- ````") or item.startswith("- ```` ")  # a code span longer than any run inside
    assert "````text" in text  # the excerpt's fence is longer than the ``` inside it


def test_json_is_the_evidence_and_the_schema_describes_it() -> None:
    ev = evidence(every_class())
    data = json.loads(render("json", ev))
    jsonschema.Draft202012Validator(review_json_schema()).validate(data)
    assert ReviewEvidence.model_validate(data) == ev
