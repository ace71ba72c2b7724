"""Pure: two runs' per-test outcomes + provenance -> the classified table and the verdict.

Rules, per test (base outcome b, head outcome h, after the one rerun of failing tests):

- either side's rerun disagrees with its first run      -> flaky (never fixed, never broken)
- collected but never reported on either side            -> missing (blocks)
- collected and run on the base, and on the head not collected, skipped, or xfailed where the
  base did not xfail                                     -> broken (blocks): see "same tests" below
- not in the head run at all (and not run on the base)   -> removed
- added by the change: failing on base, passing on head  -> fixed; otherwise added (blocks if it
  fails; error if it errors)
- passing on head: passing on base -> still passing; failing on base -> fixed, or
  edited_to_pass when the change edited the test itself (called out; never fixed)
- failing on head: passing (or skipped) on base -> broken (blocks); failing on base -> still failing
- erroring on head: passing on base -> broken; failing on base -> error; new -> error (blocks)
- skipped on head: passing on base -> broken (blocks); otherwise skipped

**Same tests, different code.** The two runs of every pair the review compares (base and head;
the base's own tests on the base code and on the head code) get the same test files, byte for
byte; only the code differs. A test the change deletes or renames in a test file is missing from
both runs of the pair (it shows as removed, from the trees). So a test that one run collects and
runs and the other does not collect (a module `__getattr__` or an import hook that skips or
empties a test module, a `sys.modules` entry, a plugin the code installs that deselects it, a
base class that stops being collectable), skips, or xfails, lost its judge to the **code**:
broken, never removed or skipped. Only a test that skipped on the base too stays non-blocking.

With ``--tests head`` the change's own tests judge it, so when the change touches the tests at
all, every test is also judged by its **base version**: the base's own tests, run on the base
code (the base tree as it is) and on the head code:

- the base version passes on the base code and not on the head code, and the row does not
  already block -> rewritten (blocks): the change rewrote, removed or disabled a judge of code it
  broke (or whose behaviour it changed on purpose: a human decides), whatever its own version of
  the test says; an unchanged test is reached by the change's other test-side edits (the tests
  share a process: a new module's import-time code, a new test that patches and never restores);
- an edited test that fails or errors on the head is pre-existing only when its base
  version fails on the base code too; otherwise the change introduced it (blocks).

`ok` only when every run completed and collected tests and no row blocks, and, with an instance
spec (SWE-bench's FAIL_TO_PASS / PASS_TO_PASS), every listed test met its expectation
(`expectations`): a FAIL_TO_PASS test fails (or is absent) on the base and passes on the head, a
PASS_TO_PASS test passes on the head; a listed test that was not collected counts as failing, a
rerun that disagrees is not a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from verifier.review.provenance import Definition, Provenance, ProvenanceIndex, Side
from verifier.review.review_evidence import (
    BAD,
    GOOD,
    BaseVersion,
    ExpectedTest,
    Outcome,
    ReviewCounts,
    SideResult,
    TestClass,
    TestRow,
)
from verifier.review.supervisor_result import Session, SupervisorResult
from verifier.text import clean, shown_name

_SIGNALS = {9: "SIGKILL: out of memory, or something killed it", 11: "SIGSEGV: a crash", 6: "SIGABRT: an abort"}


def _category(o: Outcome | None) -> str | None:
    if o is None or o in (Outcome.MISSING, Outcome.ABSENT):
        return None
    if o in GOOD:
        return "pass"
    return "fail" if o in BAD else "skip"


def _covers(collector: str, test_id: str) -> bool:
    return collector == "" or test_id == collector or test_id.startswith((collector + "::", collector + "/"))


@dataclass
class SideView:
    """One side's runs, answering per test id."""

    result: SupervisorResult | None

    @property
    def first(self) -> Session | None:
        return self.result.first if self.result else None

    @property
    def rerun(self) -> Session | None:
        return self.result.rerun if self.result else None

    def collected(self) -> Mapping[str, tuple[str, int | None]]:
        """node id -> (file, line) of the test's definition (where pytest says its function is)."""
        return self._collected

    @cached_property
    def _collected(self) -> dict[str, tuple[str, int | None]]:
        # Made once: it is asked for every test of the table (pypa/packaging's 40,000 tests made
        # anew for each of them held the host's CPU for tens of minutes).
        s = self.first
        return {} if s is None or s.collected is None else {i: (d or f, n) for i, f, n, d in s.collected}

    def definition(self, test_id: str) -> Definition | None:
        where = self.collected().get(test_id)
        return None if where is None else Definition(*where)

    def has(self, test_id: str) -> bool:
        """Whether this run said anything about the test (collected it, reported it, or failed to collect it)."""
        s = self.first
        if s is None:
            return False
        return (
            test_id in s.results or test_id in self.collected() or any(_covers(e.id, test_id) for e in s.collect_errors)
        )

    def side(self, test_id: str) -> SideResult:
        s = self.first
        if s is None:
            return SideResult(outcome=Outcome.MISSING)
        rerun = None
        if self.rerun is not None and test_id in self.rerun.results:
            rerun = _outcome(self.rerun.results[test_id].outcome)
        report = s.results.get(test_id)
        if report is not None:
            return SideResult(
                outcome=_outcome(report.outcome),
                rerun=rerun,
                phase=report.when,
                message_untrusted=clean(report.message),
                excerpt_untrusted=clean(report.excerpt),
                duration_s=max(0.0, report.duration_s),
            )
        if test_id in self.collected():
            return SideResult(outcome=Outcome.MISSING)
        for err in s.collect_errors:
            if _covers(err.id, test_id):
                return SideResult(
                    outcome=Outcome.ERROR,
                    phase="collect",
                    message_untrusted=clean(err.message),
                    excerpt_untrusted=clean(err.excerpt),
                )
        return SideResult(outcome=Outcome.ABSENT)

    def stopped(self) -> str:
        """'' when the run completed, else why not (trusted words)."""
        if self.result is None:
            return "the sandbox returned no result"
        if self.result.error:
            # Its error can quote the repository (a file name, a message): the words stay ours,
            # the error itself goes to the run's log_tail_untrusted.
            return "the in-container runner failed (its error is at the end of the run's untrusted log tail)"
        s = self.first
        if s is None:
            return "no test session ran"
        tampered = [*s.tampered, *(self.rerun.tampered if self.rerun else [])]
        if tampered:
            return "the code under test changed pytest's reporting path (" + ", ".join(tampered[:5]) + ")"
        if s.timed_out:
            reported = len(s.results)
            total = len(s.collected) if s.collected is not None else "?"
            return f"the time limit ended the session ({reported} of {total} tests had reported)"
        if s.collected is None:
            return "pytest never finished collecting" + _ended(s)
        missing = [i for i, *_ in s.collected if i not in s.results]
        if s.exit_status is None:
            return (
                f"the test process ended before pytest finished{_ended(s)}: "
                f"{len(missing)} of {len(s.collected)} tests never reported"
            )
        if missing:
            return (
                f"pytest stopped early (exit status {s.exit_status}): "
                f"{len(missing)} of {len(s.collected)} tests never reported"
            )
        if s.exit_status in (2, 3, 4):
            return f"pytest ended with exit status {s.exit_status} (interrupted, internal error or usage error)"
        return ""


_NO_MODULE = re.compile(r"No module named '([A-Za-z_][A-Za-z0-9_.]{0,200})'")


def missing_modules(view: SideView) -> set[str]:
    """Top-level names of the modules the run's collection errors say are missing."""
    s = view.first
    found: set[str] = set()
    for err in s.collect_errors if s is not None else ():
        for m in _NO_MODULE.finditer(err.message + "\n" + err.excerpt):
            found.add(m.group(1).split(".")[0])
    return found


def environment_problem(head: SideView, base_tree: SideView, own: Iterable[str]) -> str:
    """Why the tests cannot be judged for a reason that is not the change's, or ''.

    `base_tree`: the run of the base tree's own tests on the base code; `own`: the top-level
    module names the trees provide. A module missing on the head that the base tree's run also
    misses, and that the repository does not provide, is the environment's; so is a head run that
    collected nothing when the base tree's run collected nothing either and failed to collect."""
    shared = sorted((missing_modules(head) & missing_modules(base_tree)) - set(own))
    if shared:
        names = ", ".join(shared[:5]) + (f" and {len(shared) - 5} more" if len(shared) > 5 else "")
        return (
            f"environment problem: the tests of both sides cannot be collected: no module named {names} "
            "(missing on the base and the head alike, and not part of the repository); the change is not "
            "judged. Name it in a requirements file and give it with --requirements FILE"
        )
    b = base_tree.first
    if not head.collected() and not base_tree.collected() and b is not None and b.collect_errors:
        return (
            "environment problem: the tests cannot be collected on the head, nor the base's own tests on the "
            f"base ({len(b.collect_errors)} collection errors there already); the change is not judged. "
            "If a dependency is missing, give it with --requirements FILE"
        )
    return ""


def _ended(s: Session) -> str:
    rc = s.returncode
    if rc is None:
        return ""
    if rc < 0:
        return f" (killed by signal {-rc}: {_SIGNALS.get(-rc, 'see the log')})"
    return f" (it exited with code {rc}{', as os._exit(0) or sys.exit(0) would' if rc == 0 else ''})"


def _outcome(raw: str) -> Outcome:
    try:
        return Outcome(raw)
    except ValueError:
        return Outcome.ERROR


def _ran(side: SideResult) -> bool:
    """Whether the run collected this test and ran it (not skipped, not a collection error)."""
    o = side.outcome
    return o in GOOD or o is Outcome.FAILED or (o is Outcome.ERROR and side.phase != "collect")


def _hidden(before: SideResult, after: SideResult) -> str:
    """How a test that `before`'s run collected and ran lost its judge in `after`'s run ('' if not):
    not collected, skipped, or xfailed where it did not xfail before. Both runs had the same test
    files (module docstring), so what did it is the code."""
    if not _ran(before):
        return ""
    o = after.outcome
    if o is Outcome.ABSENT:
        return "not collected"
    if o is Outcome.SKIPPED:
        return "skipped"
    if o is Outcome.XFAILED and before.outcome is not Outcome.XFAILED and before.outcome is not Outcome.XPASSED:
        return "xfailed"
    return ""


def _flaky(side: SideResult) -> bool:
    a, b = _category(side.outcome), _category(side.rerun)
    return a is not None and b is not None and a != b


def classify_row(
    prov: Provenance, b: SideResult, h: SideResult, *, defines_tests: bool = True
) -> tuple[TestClass, bool, str]:
    """(class, blocking, note) of one test. Pure; the rules are the module docstring's.
    `defines_tests`: for a collection error's row, whether its file defines tests by name in the
    tests' tree (a module with none is honestly absent when it can be imported)."""
    bo, ho = b.outcome, h.outcome
    if _flaky(b) or _flaky(h):
        which = "head" if _flaky(h) else "base"
        return TestClass.FLAKY, False, f"its outcome changed when rerun on the {which} tree"
    if Outcome.MISSING in (bo, ho):
        side = "head" if ho is Outcome.MISSING else "base"
        return TestClass.MISSING, True, f"the {side} run ended before this test reported"
    hidden = _hidden(b, h)
    if hidden:
        return (
            TestClass.BROKEN,
            True,
            f"{bo.value} on the base, {hidden} on the head: both runs had the same test files, so the "
            "code under test hid it",
        )
    if ho is Outcome.ABSENT:
        if bo is Outcome.SKIPPED:
            return TestClass.SKIPPED, False, "skipped on the base, not collected on the head"
        if b.phase == "collect" and bo is Outcome.ERROR and defines_tests:
            return TestClass.BROKEN, True, "not collectable on the base code, and no tests of it on the head code"
        return TestClass.REMOVED, False, "not collected on the head"
    base_failing = bo in BAD or bo is Outcome.ABSENT
    if prov is Provenance.ADDED:
        if ho in GOOD and base_failing:
            return TestClass.FIXED, False, "added by the change: fails on the base code, passes on the head code"
        if ho is Outcome.ERROR:
            return TestClass.ERROR, True, f"added by the change; error in {h.phase or 'setup'} on the head"
        if ho is Outcome.FAILED:
            return TestClass.ADDED, True, "added by the change, and fails on the head"
        return TestClass.ADDED, False, f"added by the change; {ho.value} on the head"
    if ho in GOOD:
        if bo in GOOD:
            return TestClass.STILL_PASSING, False, ""
        if bo is Outcome.SKIPPED:
            return TestClass.STILL_PASSING, False, "skipped on the base, passes on the head"
        if prov is Provenance.EDITED:
            return TestClass.EDITED_TO_PASS, False, "the change edited this test; it went from failing to passing"
        if bo is Outcome.ABSENT:
            return TestClass.ADDED, False, "collected only on the head; passes"
        return TestClass.FIXED, False, "fails on the base code, passes on the head code"
    if ho is Outcome.SKIPPED:
        if bo in GOOD:
            return TestClass.BROKEN, True, "passed on the base, skipped on the head"
        return TestClass.SKIPPED, False, f"skipped on the head ({bo.value} on the base)"
    if ho is Outcome.FAILED:
        if bo in GOOD or bo is Outcome.SKIPPED:
            return TestClass.BROKEN, True, f"{bo.value} on the base, fails on the head"
        if bo is Outcome.ABSENT:
            return TestClass.ADDED, True, "collected only on the head, and fails"
        return TestClass.STILL_FAILING, False, ""
    # ho is ERROR
    if bo in GOOD:
        return TestClass.BROKEN, True, f"passed on the base, error in {h.phase or 'setup'} on the head"
    if bo in BAD:
        return TestClass.ERROR, False, "errors on both sides"
    return TestClass.ERROR, True, f"error in {h.phase or 'setup'} on the head ({bo.value} on the base)"


def judge_by_base_version(
    row: tuple[TestClass, bool, str], prov: Provenance, head: SideResult | None, base_version: BaseVersion | None
) -> tuple[TestClass, bool, str]:
    """The base-version rules (module docstring) on top of a row's (class, blocking, note)."""
    cls, blocking, note = row
    if base_version is not None and not blocking:  # a row that already blocks keeps its own reason
        ob, oh = base_version.on_base, base_version.on_head
        if _flaky(ob) or _flaky(oh):
            return TestClass.FLAKY, blocking, note or "its base version's outcome changed when rerun"
        hidden = _hidden(ob, oh)
        if hidden and ob.outcome not in GOOD:
            return (
                TestClass.BROKEN,
                True,
                f"its base version is {ob.outcome.value} on the base code and {hidden} on the head code: "
                "the same test files, so the code under test hid it",
            )
        if ob.outcome in GOOD and (oh.outcome not in GOOD or hidden):
            how = {
                Provenance.REMOVED: "the change removes this test",
                Provenance.EDITED: "the change edits this test or what it sees",
            }.get(prov, "the change's other test-side edits reach this test")
            return (
                TestClass.REWRITTEN,
                True,
                f"{how}; its base version passes on the base code and is {oh.outcome.value} on the head code",
            )
    if head is None or head.outcome not in BAD or blocking or prov is not Provenance.EDITED:
        return cls, blocking, note
    if base_version is None or base_version.on_base.outcome not in BAD:
        return (
            cls,
            True,
            f"{head.outcome.value} on the head; not pre-existing: the change edits this test or what it sees, "
            "and its base version did not fail on the base code",
        )
    return cls, blocking, note


@dataclass
class Table:
    rows: list[TestRow]
    counts: ReviewCounts
    edited_judges: list[str] = field(default_factory=list)


def build_table(
    base: SideView,
    head: SideView,
    provenance: ProvenanceIndex,
    removed: Iterable[tuple[str, int | None]] = (),
    judges: tuple[SideView, SideView] | None = None,
    tests_side: Side = "head",
) -> Table:
    """Every test any run collected (plus collection errors and statically removed tests), classified.

    `judges`: the runs of the base's own versions of the tests the change touched, on the base
    code and on the head code; `tests_side`: the tree the main runs' tests came from."""
    views = [base, head, *(judges or ())]
    where: dict[str, tuple[str, int | None]] = {}
    for view in reversed(views):  # the main runs' places win
        where.update(view.collected())
    ids = set(where)
    for view in views:
        if view.first is not None:
            ids.update(view.first.results)
            for err in view.first.collect_errors:
                if not any(_covers(err.id, i) for i in where):
                    ids.add(err.id)
                    where.setdefault(err.id, (err.id.split("::")[0], None))
    rows = [_row(test_id, where, base, head, provenance, judges, tests_side) for test_id in sorted(ids)]
    for test_id, line in removed:
        if test_id not in ids:
            rows.append(
                TestRow(
                    test_id=shown_name(test_id),
                    file=shown_name(test_id.split("::")[0]),
                    line=line,
                    provenance=Provenance.REMOVED,
                    classification=TestClass.REMOVED,
                    blocking=False,
                    note="the change removes this test; it did not run",
                )
            )
    rows.sort(key=lambda r: r.test_id)
    tally = {c.value: 0 for c in TestClass}
    for row in rows:
        tally[row.classification.value] += 1
    counts = ReviewCounts(total=len(rows), blocking=sum(r.blocking for r in rows), **tally)
    judged = (TestClass.EDITED_TO_PASS, TestClass.REWRITTEN)
    return Table(rows=rows, counts=counts, edited_judges=[r.test_id for r in rows if r.classification in judged])


def _row(
    test_id: str,
    where: dict[str, tuple[str, int | None]],
    base: SideView,
    head: SideView,
    provenance: ProvenanceIndex,
    judges: tuple[SideView, SideView] | None,
    tests_side: Side,
) -> TestRow:
    b, h = base.side(test_id), head.side(test_id)
    main = head.definition(test_id) or base.definition(test_id)
    if main is not None or judges is None:
        prov, why = provenance.explain(test_id, main, tests_side)
    else:
        prov, why = provenance.explain(test_id, judges[0].definition(test_id) or judges[1].definition(test_id), "base")
    base_version = None
    if judges is not None and (judges[0].has(test_id) or judges[1].has(test_id)):
        base_version = BaseVersion(on_base=judges[0].side(test_id), on_head=judges[1].side(test_id))
    defines_tests = True
    if b.phase == "collect" and h.outcome is Outcome.ABSENT:
        module = provenance.module(tests_side, test_id.split("::")[0])
        defines_tests = module is None or bool(module.tests)
    row = classify_row(prov, b, h, defines_tests=defines_tests)
    cls, blocking, note = judge_by_base_version(row, prov, h, base_version)
    if why and prov is Provenance.EDITED:
        note = f"{note}; edited: {why}" if note else f"edited: {why}"
    file, line = where.get(test_id, (test_id.split("::")[0], None))
    return TestRow(
        test_id=shown_name(test_id),
        file=shown_name(file) or None,
        line=line if line and line >= 1 else None,
        provenance=prov,
        base=b,
        head=h,
        base_version=base_version,
        classification=cls,
        blocking=blocking,
        note=note,
    )


def _passes(side: SideResult | None) -> bool:
    return side is not None and side.outcome in GOOD and (side.rerun is None or side.rerun in GOOD)


def expectations(table: Table, fail_to_pass: Iterable[str], pass_to_pass: Iterable[str]) -> list[ExpectedTest]:
    """Each listed test (node ids matched exactly) against the table: did it do what the spec says?"""
    rows = {r.test_id: r for r in table.rows}
    out = []
    for kind, ids in (("fail_to_pass", fail_to_pass), ("pass_to_pass", pass_to_pass)):
        for test_id in ids:
            row = rows.get(test_id)
            base = row.base if row is not None else None
            head = row.head if row is not None else None
            met = _passes(head) and (kind == "pass_to_pass" or _base_fails(base))
            out.append(
                ExpectedTest(
                    test_id=test_id,
                    expected=kind,  # type: ignore[arg-type]
                    base=base.outcome if base is not None else Outcome.ABSENT,
                    head=head.outcome if head is not None else Outcome.ABSENT,
                    met=met,
                )
            )
    return out


def _base_fails(base: SideResult | None) -> bool:
    return base is None or base.outcome in BAD or base.outcome == Outcome.ABSENT


def verdict(
    table: Table, stops: dict[str, str], collected: dict[str, int], expected: list[ExpectedTest] | None = None
) -> tuple[bool, str]:
    """(ok, reason): the one place that decides. With an instance spec (`expected`), ok is
    "resolved": the no-regression verdict and every listed test's expectation."""
    ok, reason = _no_regressions(table, stops, collected)
    if expected is None:
        return ok, reason
    unmet = [e for e in expected if not e.met]
    f2p = sum(1 for e in expected if e.expected == "fail_to_pass")
    if unmet:
        shown = ", ".join(f"{shown_name(e.test_id)} ({e.expected}: {e.base.value} -> {e.head.value})"
                          for e in unmet[:3])  # fmt: skip
        more = f" and {len(unmet) - 3} more" if len(unmet) > 3 else ""
        return False, f"not resolved: {len(unmet)} of {len(expected)} listed tests did not meet the spec: {shown}{more}"
    if not ok:
        return False, f"not resolved: the listed tests met the spec, but {reason}"
    return True, f"resolved: {f2p} FAIL_TO_PASS and {len(expected) - f2p} PASS_TO_PASS tests met the spec; {reason}"


def _no_regressions(table: Table, stops: dict[str, str], collected: dict[str, int]) -> tuple[bool, str]:
    order = sorted(
        {"head", "base"} | set(stops) | set(collected), key=lambda s: (_RUN_ORDER.index(s) if s in _RUN_ORDER else 9, s)
    )
    for side in order:
        if stops.get(side):
            return False, f"the {_run_name(side)} run did not complete: {stops[side]}"
    for side in order:
        if collected.get(side, 0) < 1:
            return False, f"the {_run_name(side)} run collected no tests"
    c = table.counts
    if c.blocking:
        parts = []
        others = sum(
            1 for r in table.rows if r.blocking and r.classification not in (TestClass.BROKEN, TestClass.REWRITTEN)
        )
        if c.broken:
            parts.append(f"{c.broken} broken (passed on base, not on head)")
        if c.rewritten:
            parts.append(
                f"{c.rewritten} rewritten (the change edits or removes tests whose base versions pass on the "
                "base code and not on the head code)"
            )
        if others:
            parts.append(f"{others} new failing, erroring or missing")
        return False, "not ok: " + ", ".join(parts)
    judged = [f"{c.total} tests judged"] + [
        f"{n} {label}"
        for n, label in (
            (c.fixed, "fixed"),
            (c.still_passing, "still passing"),
            (c.edited_to_pass, "edited to pass"),
            (c.added, "added"),
            (c.still_failing, "still failing"),
            (c.error, "erroring on both sides"),
            (c.skipped, "skipped"),
            (c.removed, "removed"),
            (c.flaky, "flaky"),
        )
        if n or label in ("fixed", "still passing")
    ]
    tail = ""
    if any(r.base_version is not None for r in table.rows):
        touched = sum(1 for r in table.rows if r.provenance in (Provenance.EDITED, Provenance.REMOVED))
        tail = "; the base's own tests still pass on the head code" + (
            f" (the change edits or removes {touched} of them)" if touched else ""
        )
    return True, "no regressions: " + ", ".join(judged) + tail


_RUN_ORDER = ("head", "base", "base_tests_on_head", "base_tests_on_base")


def _run_name(side: str) -> str:
    return side.replace("_", " ")
