"""Pure: two runs' per-test outcomes + provenance -> the classified table and the verdict.

Rules, per test (base outcome b, head outcome h, after the one rerun of failing tests):

- either side's rerun disagrees with its first run      -> flaky (never fixed, never broken)
- collected but never reported on either side            -> missing (blocks)
- not in the head run at all                             -> removed
- added by the change: failing on base, passing on head  -> fixed; otherwise added (blocks if it
  fails; error if it errors)
- passing on head: passing on base -> still passing; failing on base -> fixed, or
  edited_to_pass when the change edited the test itself (called out; never fixed)
- failing on head: passing (or skipped) on base -> broken (blocks); failing on base -> still failing
- erroring on head: passing on base -> broken; failing on base -> error; new -> error (blocks)
- skipped on head: passing on base -> broken (blocks); otherwise skipped

`ok` only when both runs completed and collected tests and no row blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from verifier.review.provenance import Provenance, ProvenanceIndex
from verifier.review.review_evidence import BAD, GOOD, Outcome, ReviewCounts, SideResult, TestClass, TestRow
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

    def collected(self) -> dict[str, tuple[str, int | None]]:
        s = self.first
        return {} if s is None or s.collected is None else {i: (f, n) for i, f, n in s.collected}

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
        if s.timed_out:
            reported = len(s.results)
            total = len(s.collected) if s.collected is not None else "?"
            return f"the time limit ended the session ({reported} of {total} tests had reported)"
        if s.collected is None:
            return "pytest never finished collecting" + _ended(s)
        missing = [i for i, _, _ in s.collected if i not in s.results]
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


def _flaky(side: SideResult) -> bool:
    a, b = _category(side.outcome), _category(side.rerun)
    return a is not None and b is not None and a != b


def classify_row(prov: Provenance, b: SideResult, h: SideResult) -> tuple[TestClass, bool, str]:
    """(class, blocking, note) of one test. Pure; the rules are the module docstring's."""
    bo, ho = b.outcome, h.outcome
    if _flaky(b) or _flaky(h):
        which = "head" if _flaky(h) else "base"
        return TestClass.FLAKY, False, f"its outcome changed when rerun on the {which} tree"
    if Outcome.MISSING in (bo, ho):
        side = "head" if ho is Outcome.MISSING else "base"
        return TestClass.MISSING, True, f"the {side} run ended before this test reported"
    if ho is Outcome.ABSENT:
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
) -> Table:
    """Every test either run collected (plus collection errors and statically removed tests), classified."""
    where: dict[str, tuple[str, int | None]] = {**base.collected(), **head.collected()}
    ids = set(where)
    for view in (base, head):
        if view.first is not None:
            ids.update(view.first.results)
            for err in view.first.collect_errors:
                if not any(_covers(err.id, i) for i in where):
                    ids.add(err.id)
                    where.setdefault(err.id, (err.id.split("::")[0], None))
    rows: list[TestRow] = []
    for test_id in sorted(ids):
        b, h = base.side(test_id), head.side(test_id)
        prov = provenance.of(test_id)
        cls, blocking, note = classify_row(prov, b, h)
        file, line = where.get(test_id, (test_id.split("::")[0], None))
        rows.append(
            TestRow(
                test_id=shown_name(test_id),
                file=shown_name(file) or None,
                line=line if line and line >= 1 else None,
                provenance=prov,
                base=b,
                head=h,
                classification=cls,
                blocking=blocking,
                note=note,
            )
        )
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
    judges = [r.test_id for r in rows if r.classification is TestClass.EDITED_TO_PASS]
    return Table(rows=rows, counts=counts, edited_judges=judges)


def verdict(table: Table, stops: dict[str, str], collected: dict[str, int]) -> tuple[bool, str]:
    """(ok, reason): the one place that decides."""
    for side in ("head", "base"):
        if stops.get(side):
            return False, f"the {side} run did not complete: {stops[side]}"
    for side in ("head", "base"):
        if collected.get(side, 0) < 1:
            return False, f"the {side} run collected no tests"
    c = table.counts
    if c.blocking:
        parts = []
        new_failures = sum(1 for r in table.rows if r.blocking and r.classification is not TestClass.BROKEN)
        if c.broken:
            parts.append(f"{c.broken} broken (passed on base, not on head)")
        if new_failures:
            parts.append(f"{new_failures} new failing, erroring or missing")
        return False, "not ok: " + ", ".join(parts)
    return True, f"no regressions: {summary(c)}"


def summary(c: ReviewCounts) -> str:
    """'N tests judged: a fixed, b still passing, ...': every class with tests, so the parts add up to N."""
    parts = [f"{n} {cls.value.replace('_', ' ')}" for cls in TestClass if (n := getattr(c, cls.value))]
    return f"{c.total} tests judged: " + ", ".join(parts) if parts else f"{c.total} tests judged"
