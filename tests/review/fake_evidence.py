"""Synthetic ReviewEvidence for report tests (the engine tests produce real ones)."""

from __future__ import annotations

from verifier.review.provenance import Provenance
from verifier.review.review_evidence import (
    EnvironmentRecord,
    Outcome,
    ProjectRecord,
    PytestSession,
    ReviewCounts,
    ReviewEvidence,
    RunRecord,
    SideResult,
    TestClass,
    TestRow,
    Timings,
    TreeRef,
)
from verifier.review.service import REVIEW_LIMITS


def row(
    test_id: str,
    cls: TestClass,
    base: Outcome | None,
    head: Outcome | None,
    *,
    blocking: bool = False,
    prov: Provenance = Provenance.UNCHANGED,
    excerpt: str = "",
    line: int | None = 3,
) -> TestRow:
    return TestRow(
        test_id=test_id,
        file=test_id.split("::")[0],
        line=line,
        provenance=prov,
        base=None if base is None else SideResult(outcome=base),
        head=None
        if head is None
        else SideResult(outcome=head, message_untrusted=excerpt[:80], excerpt_untrusted=excerpt, duration_s=0.25),
        classification=cls,
        blocking=blocking,
        note="synthetic",
    )


def evidence(rows: list[TestRow], *, ok: bool = False, edited: list[str] | None = None) -> ReviewEvidence:
    tally = {c.value: sum(r.classification is c for r in rows) for c in TestClass}
    env = EnvironmentRecord(
        digest="d" * 64, image_id="sha256:" + "e" * 64, requirements=[], sources=[], packages=[], built=False
    )
    runs = [
        RunRecord(
            side=side,
            code_from=side,
            tests_from="head",
            tree="f" * 40,
            environment=env,
            project=ProjectRecord(name="x", version="1", import_roots=[""]),
            complete=True,
            collected=len(rows),
        )
        for side in ("base", "head")
    ]
    return ReviewEvidence(
        review_id="a" * 64,
        ok=ok,
        reason="synthetic",
        repository="repo",
        repository_uri="https://example.invalid/org/repo",
        hostname="ci-runner-1",
        timings=Timings(started_at="2026-01-02T03:04:05+00:00"),
        base=TreeRef(ref="main", commit="1" * 40, tree="2" * 40),
        head=TreeRef(ref="change", commit="3" * 40, tree="4" * 40),
        tests_mode="head",
        pytest=PytestSession(
            config_file=None,
            paths=["."],
            python_files=["test_*.py", "*_test.py"],
            python_classes=["Test"],
            python_functions=["test"],
            args=["-c", "/dev/null", "--confcutdir", "."],
        ),
        sandbox_image_id="sha256:" + "5" * 64,
        limits=REVIEW_LIMITS,
        runs=runs,
        tests=rows,
        counts=ReviewCounts(total=len(rows), blocking=sum(r.blocking for r in rows), **tally),
        edited_judges=edited or [],
        verifier_version="0",
    )


def every_class() -> list[TestRow]:
    return [
        row(
            "tests/test_a.py::test_broken",
            TestClass.BROKEN,
            Outcome.PASSED,
            Outcome.FAILED,
            blocking=True,
            excerpt="E  assert 1 == 2",
        ),
        row("tests/test_a.py::test_fixed", TestClass.FIXED, Outcome.FAILED, Outcome.PASSED),
        row("tests/test_a.py::test_same", TestClass.STILL_PASSING, Outcome.PASSED, Outcome.PASSED),
        row("tests/test_a.py::test_old_bug", TestClass.STILL_FAILING, Outcome.FAILED, Outcome.FAILED, excerpt="E  x"),
        row(
            "tests/test_b.py::test_new",
            TestClass.ADDED,
            Outcome.PASSED,
            Outcome.FAILED,
            blocking=True,
            prov=Provenance.ADDED,
        ),
        row("tests/test_a.py::test_gone", TestClass.REMOVED, None, None, prov=Provenance.REMOVED, line=None),
        row("tests/test_a.py::test_flaky", TestClass.FLAKY, Outcome.PASSED, Outcome.FAILED),
        row("tests/test_c.py", TestClass.ERROR, Outcome.ERROR, Outcome.ERROR, line=None),
        row("tests/test_a.py::test_late", TestClass.MISSING, Outcome.PASSED, Outcome.MISSING, blocking=True),
        row("tests/test_a.py::test_skip", TestClass.SKIPPED, Outcome.SKIPPED, Outcome.SKIPPED),
        row(
            "tests/test_a.py::test_rigged",
            TestClass.EDITED_TO_PASS,
            Outcome.FAILED,
            Outcome.PASSED,
            prov=Provenance.EDITED,
        ),
    ]
