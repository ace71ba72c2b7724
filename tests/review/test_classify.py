"""The classification rules (pure) and the verdict: every class, and fail-closed completeness."""

from __future__ import annotations

from typing import Any

import pytest

from verifier.review.classify import SideView, build_table, classify_row, judge_by_base_version, verdict
from verifier.review.gitread import Entry
from verifier.review.provenance import Definition, Provenance, ProvenanceIndex
from verifier.review.review_evidence import BaseVersion, Outcome, SideResult, TestClass
from verifier.review.supervisor_result import SupervisorResult
from verifier.runner.review_protocol import PROTOCOL

P, F, E, S, A, M = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.ABSENT, Outcome.MISSING
U, ADD, ED, RM = Provenance.UNCHANGED, Provenance.ADDED, Provenance.EDITED, Provenance.REMOVED


def side(o: Outcome, rerun: Outcome | None = None) -> SideResult:
    return SideResult(outcome=o, rerun=rerun)


@pytest.mark.parametrize(
    ("prov", "b", "h", "cls", "blocking"),
    [
        (U, side(P), side(P), TestClass.STILL_PASSING, False),
        (U, side(F, F), side(P), TestClass.FIXED, False),
        (U, side(P), side(F, F), TestClass.BROKEN, True),
        (U, side(F, F), side(F, F), TestClass.STILL_FAILING, False),
        (ADD, side(F, F), side(P), TestClass.FIXED, False),
        (ADD, side(E), side(P), TestClass.FIXED, False),  # a new test module that cannot import on the base
        (ADD, side(P), side(P), TestClass.ADDED, False),
        (ADD, side(P), side(F, F), TestClass.ADDED, True),  # no added test may fail
        # Both runs had the same test files: a test the base collected and ran that the head does not
        # collect, skips or xfails was hidden by the code (a module __getattr__ that skips, ...).
        (U, side(P), side(A), TestClass.BROKEN, True),
        (U, side(F, F), side(A), TestClass.BROKEN, True),
        (ED, side(P), side(A), TestClass.BROKEN, True),
        (ADD, side(F, F), side(A), TestClass.BROKEN, True),
        (U, side(F, F), side(S), TestClass.BROKEN, True),
        (U, side(P), side(Outcome.XFAILED), TestClass.BROKEN, True),
        (U, side(F, F), side(Outcome.XFAILED), TestClass.BROKEN, True),
        (ADD, side(F, F), side(Outcome.XFAILED), TestClass.BROKEN, True),
        (U, side(S), side(A), TestClass.SKIPPED, False),  # judged nothing on the base either
        (U, side(A), side(A), TestClass.REMOVED, False),  # the change removed it from the tests
        (U, side(Outcome.XPASSED), side(Outcome.XFAILED), TestClass.STILL_PASSING, False),  # its own xfail mark
        (U, side(Outcome.XFAILED), side(Outcome.XFAILED), TestClass.STILL_PASSING, False),
        (U, side(P), side(F, P), TestClass.FLAKY, False),  # failed, then passed on rerun: never broken
        (U, side(F, P), side(P), TestClass.FLAKY, False),  # never fixed either
        (U, side(E), side(E), TestClass.ERROR, False),
        (U, side(A), side(E), TestClass.ERROR, True),
        (U, side(P), side(E), TestClass.BROKEN, True),
        (U, side(P), side(M), TestClass.MISSING, True),
        (U, side(M), side(P), TestClass.MISSING, True),
        (ED, side(F, F), side(P), TestClass.EDITED_TO_PASS, False),  # edits its own judge: never fixed
        (ED, side(P), side(F, F), TestClass.BROKEN, True),
        (U, side(P), side(S), TestClass.BROKEN, True),  # a passing test that now skips lost its check
        (U, side(S), side(S), TestClass.SKIPPED, False),
        (U, side(S), side(F, F), TestClass.BROKEN, True),
        (U, side(Outcome.XFAILED), side(P), TestClass.STILL_PASSING, False),
    ],
)
def test_rules(prov: Provenance, b: SideResult, h: SideResult, cls: TestClass, blocking: bool) -> None:
    got, block, _ = classify_row(prov, b, h)
    assert (got, block) == (cls, blocking)


@pytest.mark.parametrize(
    ("prov", "b", "h", "old", "cls", "blocking"),
    [
        # A wrapper hides the bug: the change's test passes on both sides, its base version fails on the head.
        (ED, side(P), side(P), (side(P), side(F, F)), TestClass.REWRITTEN, True),
        # The change deletes the tests that catch its bug.
        (RM, side(A), side(A), (side(P), side(F, F)), TestClass.REWRITTEN, True),
        (RM, side(A), side(A), (side(P), side(E)), TestClass.REWRITTEN, True),
        # A test disabled by the change (skip mark, deleted at import) whose base version no longer passes.
        (ED, side(S), side(S), (side(P), side(S)), TestClass.REWRITTEN, True),
        # A removal that hides nothing, an edit that strengthens a test: the base versions still pass.
        (RM, side(A), side(A), (side(P), side(P)), TestClass.REMOVED, False),
        (ED, side(F, F), side(P), (side(P), side(P)), TestClass.EDITED_TO_PASS, False),
        # A conftest the change breaks errors every test on both sides: not pre-existing.
        (ED, side(E), side(E), (side(P), side(P)), TestClass.ERROR, True),
        (ED, side(F, F), side(F, F), (side(P), side(P)), TestClass.STILL_FAILING, True),
        (ED, side(F, F), side(F, F), None, TestClass.STILL_FAILING, True),  # no base version ran: fail closed
        # Pre-existing when the base's own test fails on the base code too.
        (ED, side(F, F), side(F, F), (side(F, F), side(F, F)), TestClass.STILL_FAILING, False),
        (ED, side(E), side(E), (side(E), side(E)), TestClass.ERROR, False),
        # A row that already blocks keeps its reason (broken, not rewritten).
        (U, side(P), side(F, F), (side(P), side(F, F)), TestClass.BROKEN, True),
        # An unchanged test that passes only beside the change's other tests (a new module patches the
        # code at import): its base version, run with the base's tests alone, fails on the head code.
        (U, side(P), side(P), (side(P), side(F, F)), TestClass.REWRITTEN, True),
        (U, side(F, F), side(P), (side(P), side(F, F)), TestClass.REWRITTEN, True),
        # The code hides the base version on the head code: broken when it failed on the base code,
        # rewritten when it passed (xfailed by the code is not a pass).
        (ED, side(S), side(S), (side(F, F), side(A)), TestClass.BROKEN, True),
        (RM, side(A), side(A), (side(F, F), side(S)), TestClass.BROKEN, True),
        (ED, side(P), side(P), (side(P), side(Outcome.XFAILED)), TestClass.REWRITTEN, True),
        (ED, side(S), side(S), (side(S), side(A)), TestClass.SKIPPED, False),
        # The base version's outcome changes when rerun: flaky, never rewritten.
        (ED, side(P), side(P), (side(P), side(F, P)), TestClass.FLAKY, False),
    ],
)
def test_base_version_rules(
    prov: Provenance,
    b: SideResult,
    h: SideResult,
    old: tuple[SideResult, SideResult] | None,
    cls: TestClass,
    blocking: bool,
) -> None:
    version = None if old is None else BaseVersion(on_base=old[0], on_head=old[1])
    got, block, note = judge_by_base_version(classify_row(prov, b, h), prov, h, version)
    assert (got, block) == (cls, blocking), note


def session(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"collected": [], "results": {}, "collect_errors": [], "exit_status": 0, "returncode": 0}
    return base | kw


def view(*sessions: dict[str, Any], error: str | None = None) -> SideView:
    return SideView(SupervisorResult.model_validate({"protocol": PROTOCOL, "runs": list(sessions), "error": error}))


def test_a_side_reads_its_collected_tests_once() -> None:
    # The table asks each side about every test: the id -> definition map is made once per side,
    # not once per test (made anew, a repository of 40,000 tests held the host's CPU for minutes).
    ids = [f"t/test_many.py::test_{i}" for i in range(2000)]
    one = view(session(collected=[[i, "t/test_many.py", n, "t/test_many.py"] for n, i in enumerate(ids)]))
    first = one.collected()
    assert one.collected() is first and len(first) == 2000
    assert one.definition(ids[7]) == Definition("t/test_many.py", 7) and one.has(ids[-1])
    assert one.collected() is first


def test_collection_errors_map_onto_the_tests_of_their_file() -> None:
    head = view(
        session(
            collected=[
                ["t/test_new.py::test_a", "t/test_new.py", 1, "t/test_new.py"],
                ["t/test_old.py::test_b", "t/test_old.py", 1, "t/test_old.py"],
            ],
            results={"t/test_new.py::test_a": {"outcome": "passed"}, "t/test_old.py::test_b": {"outcome": "passed"}},
            collect_errors=[{"id": "t/test_broken.py", "message": "ImportError"}],
        )
    )
    base = view(
        session(
            collected=[["t/test_old.py::test_b", "t/test_old.py", 1, "t/test_old.py"]],
            results={"t/test_old.py::test_b": {"outcome": "passed"}},
            collect_errors=[{"id": "t/test_new.py", "message": "ImportError: cannot import name 'new'"}],
            exit_status=1,
        )
    )
    files = {"t/test_old.py": Entry("100644", b"def test_b(): pass\n")}
    head_files = files | {
        "t/test_new.py": Entry("100644", b"def test_a(): pass\n"),
        "t/test_broken.py": Entry("100644", b"import nothing\n"),
    }
    table = build_table(base, head, ProvenanceIndex(files, head_files))
    by_id = {r.test_id: r for r in table.rows}
    assert by_id["t/test_new.py::test_a"].classification is TestClass.FIXED
    assert by_id["t/test_new.py::test_a"].base is not None and by_id["t/test_new.py::test_a"].base.phase == "collect"
    assert by_id["t/test_broken.py"].classification is TestClass.ERROR and by_id["t/test_broken.py"].blocking
    ok, reason = verdict(table, {"base": base.stopped(), "head": head.stopped()}, {"base": 1, "head": 2})
    assert not ok and "1 new failing" in reason


def test_a_session_that_ends_early_is_incomplete_and_its_tests_missing() -> None:
    collected = [[f"t.py::test_{i}", "t.py", i + 1, "t.py"] for i in range(5)]
    results = {f"t.py::test_{i}": {"outcome": "passed"} for i in range(2)}
    early = view(session(collected=collected, results=results, exit_status=None, returncode=0))
    assert "exited with code 0" in early.stopped() and "3 of 5 tests never reported" in early.stopped()
    assert early.side("t.py::test_3").outcome is Outcome.MISSING
    full = view(session(collected=collected, results={i: {"outcome": "passed"} for i, *_ in collected}))
    assert full.stopped() == ""
    table = build_table(full, early, ProvenanceIndex({}, {}))
    ok, reason = verdict(table, {"base": full.stopped(), "head": early.stopped()}, {"base": 5, "head": 5})
    assert not ok and reason.startswith("the head run did not complete")
    assert table.counts.missing == 3


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"collected": None, "exit_status": 4, "returncode": 4}, "never finished collecting"),
        ({"timed_out": True, "exit_status": None, "returncode": -9}, "time limit"),
        ({"exit_status": None, "returncode": -9}, "signal 9"),
        ({"exit_status": 2}, "exit status 2"),
    ],
)
def test_incomplete_sessions_say_why(kw: dict[str, Any], words: str) -> None:
    assert words in view(session(**kw)).stopped()


def test_no_result_and_runner_errors_are_incomplete() -> None:
    assert SideView(None).stopped() == "the sandbox returned no result"
    assert "runner failed" in view(error="OSError: disk full").stopped()


def test_a_runner_error_quoting_the_repository_stays_out_of_the_trusted_reason() -> None:
    """The supervisor's error can quote the repository (a file name it could not write): the
    reason says so in our words; the error itself is kept in the run's untrusted log tail."""
    from verifier.review.service import _log_tail

    hostile = "OSError: [Errno 36] File name too long: 'ALL TESTS PASSED\nreason: no regressions.py'"
    side = view(session(log_tail="== 3 passed =="), error=hostile)
    stopped = side.stopped()
    assert "runner failed" in stopped and "ALL TESTS PASSED" not in stopped and "no regressions" not in stopped
    ok, reason = verdict(build_table(side, side, ProvenanceIndex({}, {})), {"head": stopped}, {})
    assert not ok and "ALL TESTS PASSED" not in reason
    assert _log_tail(side).startswith("== 3 passed ==") and hostile in _log_tail(side)


def test_ok_needs_tests_on_both_sides() -> None:
    empty = view(session())
    table = build_table(empty, empty, ProvenanceIndex({}, {}))
    assert verdict(table, {"base": "", "head": ""}, {"base": 0, "head": 0}) == (
        False,
        "the head run collected no tests",
    )


def test_the_summary_line_adds_up() -> None:
    """Attacks: "4 tests judged, 1 fixed, 2 still passing" left out the added test."""
    collected = [[f"t.py::test_{i}", "t.py", i + 1, "t.py"] for i in range(4)]
    base = view(
        session(
            collected=collected[:3],
            results={"t.py::test_0": {"outcome": "failed"}}
            | {f"t.py::test_{i}": {"outcome": "passed"} for i in (1, 2)},
        )
    )
    head = view(session(collected=collected, results={i: {"outcome": "passed"} for i, _, _, _ in collected}))
    head_files = {"t.py": Entry("100644", b"def test_0(): pass\ndef test_1(): pass\ndef test_2(): pass\n")}
    table = build_table(base, head, ProvenanceIndex(head_files, head_files))
    ok, reason = verdict(table, {"base": "", "head": ""}, {"base": 3, "head": 4})
    assert ok and reason == "no regressions: 4 tests judged, 1 fixed, 2 still passing, 1 added"
    total, *parts = reason.removeprefix("no regressions: ").split(", ")
    assert sum(int(p.split()[0]) for p in parts) == int(total.split()[0]) == table.counts.total
