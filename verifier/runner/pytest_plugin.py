"""The pytest plugin of the trusted side: pytest's own reports -> Results."""

from __future__ import annotations

from typing import Any

import pytest

from .proxy import CandidateFault
from .results import Results


class Recorder(Results):
    """Fills Results from pytest's reports (the trusted process's own, never the candidate's)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.excinfo is not None:
            exc = call.excinfo.value
            leaf = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            raised_by = getattr(leaf, "verifier_raised_by_candidate", None)
            if isinstance(leaf, CandidateFault):
                self.kinds[item.nodeid] = leaf.kind
                self.kinds[item.nodeid + "::why"] = (
                    "the candidate could not be imported" if leaf.kind == "import_error" else str(leaf)[:300]
                )
            elif raised_by is not None:
                self.kinds[item.nodeid] = "exception"
                self.kinds[item.nodeid + "::why"] = f"the candidate raised {raised_by}"
            elif isinstance(leaf, AssertionError):
                self.kinds.setdefault(item.nodeid, "assertion")
            else:
                self.kinds.setdefault(item.nodeid, "exception")
            self.kinds[item.nodeid + "::type"] = type(leaf).__name__
        return report

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1
            detail = str(report.longreprtext)
            if self.session.import_error is not None:
                kind = self.session.import_fault.kind
                message = f"the candidate could not be imported ({kind.replace('_', ' ')})"
            else:
                kind, message = "collection_error", "the suite could not be collected"
            self.fail(report.nodeid or "<collection>", kind, message, detail)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        previous = self.outcomes.get(nodeid)
        if report.skipped or getattr(report, "wasxfail", None) is not None:
            self.outcomes[nodeid] = "skipped"
            if previous != "skipped":
                self.fail(
                    nodeid,
                    "skipped",
                    "the test was skipped or xfailed, which never counts as a pass",
                    str(report.longreprtext),
                )
        elif report.failed:
            outcome = "failed" if report.when == "call" else "error"
            if previous not in ("failed", "error"):
                kind = self.kinds.get(nodeid, "exception")
                etype = self.kinds.get(nodeid + "::type", "error")
                why = self.kinds.get(nodeid + "::why")
                if why is None:
                    why = "an assertion failed" if kind == "assertion" else f"{etype} raised"
                where = "" if report.when == "call" else f" (in {report.when})"
                self.fail(nodeid, kind, why + where, str(report.longreprtext))
            self.outcomes[nodeid] = outcome
        elif report.when == "call" and previous is None:
            self.outcomes[nodeid] = "passed"
