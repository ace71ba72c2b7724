"""The pytest plugin of the trusted side: pytest's own reports -> Results."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from .progress import Progress
from .proxy import CandidateSession
from .results import Results, Why, why_failed


def skip_final_collection(config: pytest.Config) -> None:
    """Tell pytest not to run the garbage collector once more when its session ends (the knob
    pytest's own pytester uses). pytest runs it to report exceptions raised in `__del__` of
    garbage left by the tests, as warnings after every test's outcome is decided; here the
    trusted child exits right after, and that full collection walked the whole heap the child
    inherited from the trusted server (pytest, Hypothesis, an environment's numpy and pandas),
    copying every page of it: about 6,000 page faults and 37 ms of CPU a job with pandas loaded.
    Nothing else about the collector changes: the tests and the candidate see it as plain pytest's
    process would. Without the knob (another pytest) the collection runs as before."""
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:
        return
    config.stash[gc_collect_iterations_key] = 0


class PytestResults(Results):
    """Fills Results from pytest's reports (the trusted process's own, never the candidate's)."""

    def __init__(self, session: CandidateSession, progress: Progress | None = None) -> None:
        super().__init__(session, progress)
        self.why: dict[str, Why] = {}
        self.collect_exc: dict[str, BaseException] = {}

    def pytest_configure(self, config: pytest.Config) -> None:
        skip_final_collection(config)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.session.begin_test()  # per-test mode: a fresh candidate side for every test

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        if call.excinfo is not None:
            self.why.setdefault(item.nodeid, why_failed(call.excinfo.value))
        return report

    def pytest_exception_interact(
        self,
        node: pytest.Item | pytest.Collector,
        call: pytest.CallInfo[Any],
        report: pytest.CollectReport | pytest.TestReport,
    ) -> None:
        # pytest calls this (before pytest_collectreport) with the exception a collector raised:
        # the only public place where a collection error's exception, not its text, can be seen.
        if isinstance(report, pytest.CollectReport) and call.excinfo is not None:
            self.collect_exc[report.nodeid] = call.excinfo.value

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            exc = self.collect_exc.pop(report.nodeid, None)
            self.collection_failed(report.nodeid or "<collection>", str(report.longreprtext), exc)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)
        self.progress.collected(self.collected)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        if report.when == "teardown":
            self.progress.one_done()
        previous = self.outcomes.get(nodeid)
        if report.skipped or getattr(report, "wasxfail", None) is not None:
            self.outcomes[nodeid] = "skipped"
            if previous != "skipped":
                self.skipped(nodeid, str(report.longreprtext))
        elif report.failed:
            if previous not in ("failed", "error"):
                why = self.why.get(nodeid, Why("exception", "the test failed"))
                where = "" if report.when == "call" else f" (in {report.when})"
                self.fail(nodeid, why, str(report.longreprtext), where)
            self.outcomes[nodeid] = "failed" if report.when == "call" else "error"
        elif report.when == "call" and previous is None:
            self.outcomes[nodeid] = "passed"
