"""JUnit XML of the head run, as CI test reporters read it (pytest's own --junitxml shape).

One ``<testcase>`` per test the head run collected, with its ``time`` in the head run: failed
-> ``<failure>``, error or missing -> ``<error>``, skipped and flaky -> ``<skipped>`` (a flaky
test never counts as broken). The review's classification of each test is in its
``<system-out>``; the verdict and the hashes are properties of the suite, which has the
review's ``timestamp`` and ``hostname``. Gate CI on `verifier review`'s exit code, not on this
file: a test that was already failing on the base is a failure here too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verifier.review.review_evidence import Outcome, ReviewEvidence, TestClass, TestRow
from verifier.text import one_line, visible


def _classname(row: TestRow) -> str:
    path, _, rest = row.test_id.partition("::")
    parts = [p for p in rest.split("::") if p][:-1]
    module = path.removesuffix(".py").replace("/", ".")
    return visible(".".join([module, *parts]), keep_newlines=False)


def _name(row: TestRow) -> str:
    return visible(row.test_id.split("::")[-1], keep_newlines=False)


def render(ev: ReviewEvidence) -> str:
    head_run = next(r for r in ev.runs if r.side == "head")
    rows = [r for r in ev.tests if r.head is not None and r.head.outcome is not Outcome.ABSENT]
    counts: dict[str, int] = {"failures": 0, "errors": 0, "skipped": 0}
    suite = ET.Element("testsuite", name="verifier review (head)")
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("review_id", ev.review_id),
        ("ok", str(ev.ok).lower()),
        ("reason", one_line(ev.reason, 500)),
        ("base_tree", ev.base.tree),
        ("head_tree", ev.head.tree),
        ("tests_mode", ev.tests_mode),
        ("isolation", ev.isolation),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    for row in rows:
        assert row.head is not None
        case = ET.SubElement(
            suite, "testcase", classname=_classname(row), name=_name(row), time=f"{row.head.duration_s:.3f}"
        )
        if row.file:
            case.set("file", visible(row.file, keep_newlines=False))
        if row.line:
            case.set("line", str(row.line))
        outcome = row.head.outcome
        message = one_line(row.head.message_untrusted or row.note or outcome.value, 500)
        detail = visible(row.head.excerpt_untrusted)
        if row.classification is TestClass.FLAKY:
            ET.SubElement(case, "skipped", type="flaky", message=f"flaky: {row.note}")
            counts["skipped"] += 1
        elif outcome is Outcome.FAILED:
            ET.SubElement(case, "failure", type=row.classification.value, message=message).text = detail
            counts["failures"] += 1
        elif outcome in (Outcome.ERROR, Outcome.MISSING):
            why = message if outcome is Outcome.ERROR else "the run ended before this test reported"
            ET.SubElement(case, "error", type=row.classification.value, message=why).text = detail
            counts["errors"] += 1
        elif outcome is Outcome.SKIPPED:
            ET.SubElement(case, "skipped", message=message)
            counts["skipped"] += 1
        verdict = f"{row.classification.value} ({row.provenance.value}); {row.note}".rstrip("; ")
        ET.SubElement(case, "system-out").text = visible(verdict)
    suite.set("tests", str(len(rows)))
    for key, n in counts.items():
        suite.set(key, str(n))
    suite.set("time", f"{head_run.duration_s:.3f}")
    if ev.timings.started_at:
        suite.set("timestamp", ev.timings.started_at)
    if ev.hostname:
        suite.set("hostname", visible(ev.hostname, keep_newlines=False))
    root = ET.Element("testsuites", name="verifier review", tests=str(len(rows)))
    for key, n in counts.items():
        root.set(key, str(n))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
