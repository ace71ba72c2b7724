"""The trusted process: runs the suite with pytest and Hypothesis, reports one result.

Runs as the trusted user. The candidate lives in other processes under another uid
(see proxy.py), so nothing it does can patch pytest, Hypothesis or this reporter, or
reach the result channel: the container's stdout, which only this process holds.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import sys
import time
from typing import Any

import pytest

from .proxy import CandidateFault, CandidateModule, CandidateSession

TRUSTED_DIR = "/run/trusted"
MAX_DETAIL = 4000
_EXAMPLE_START = re.compile(r"(?:Falsifying example|Failing test case): ?(.*)$")


def falsifying_example(detail: str) -> str | None:
    """Hypothesis' minimal failing call, as it printed it (pytest prefixes removed)."""
    lines = [re.sub(r"^E {0,3}", "", ln) for ln in detail.splitlines()]
    for i, line in enumerate(lines):
        m = _EXAMPLE_START.search(line)
        if not m:
            continue
        out = [m.group(1)]
        depth = m.group(1).count("(") - m.group(1).count(")")
        for nxt in lines[i + 1 :]:
            if depth <= 0:
                break
            out.append(nxt)
            depth += nxt.count("(") - nxt.count(")")
        return "\n".join(out).strip()[:MAX_DETAIL] or None
    return None


class Recorder:
    """pytest plugin: counts and failures, from the trusted side's own reports."""

    def __init__(self, session: CandidateSession) -> None:
        self.session = session
        self.collected: int | None = None
        self.outcomes: dict[str, str] = {}
        self.failures: list[dict[str, Any]] = []
        self.kinds: dict[str, str] = {}
        self.collect_errors = 0

    def _fail(self, test_id: str, kind: str, message: str, detail: str) -> None:
        example = falsifying_example(detail)
        self.failures.append(
            {
                "test_id": test_id,
                "kind": kind,
                "message": message[:2000],
                "falsifying_example": example,
                "detail_untrusted": detail[-MAX_DETAIL:],
            }
        )

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
            self._fail(report.nodeid or "<collection>", kind, message, detail)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        previous = self.outcomes.get(nodeid)
        if report.skipped or getattr(report, "wasxfail", None) is not None:
            self.outcomes[nodeid] = "skipped"
            if previous != "skipped":
                self._fail(
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
                self._fail(nodeid, kind, why + where, str(report.longreprtext))
            self.outcomes[nodeid] = outcome
        elif report.when == "call" and previous is None:
            self.outcomes[nodeid] = "passed"

    def counts(self) -> dict[str, int]:
        values = list(self.outcomes.values())
        return {
            "expected": self.collected or 0,
            "passed": values.count("passed"),
            "failed": values.count("failed"),
            "errors": values.count("error") + self.collect_errors,
            "skipped": values.count("skipped"),
        }


def _write_suite(suite_json: bytes, root: str) -> list[str]:
    files = json.loads(suite_json)["files"]
    written = []
    for rel, b64 in sorted(files.items()):
        if rel.startswith("/") or ".." in rel.split("/"):
            raise SystemExit(f"trusted: refusing suite path {rel!r}")
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(b64))
        written.append(rel)
    return written


def main() -> None:
    t_start = time.time()
    # Our stdout is the result channel: keep it for the one result line, and send
    # everything else this process prints (pytest's report) to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ctl = socket.socket(fileno=int(sys.argv[1]))
    with open(f"{TRUSTED_DIR}/job.json") as fh:
        job = json.load(fh)
    with open(f"{TRUSTED_DIR}/suite.json", "rb") as fh:
        suite_root = f"{TRUSTED_DIR}/suite"
        _write_suite(fh.read(), suite_root)
    config = job["config"]
    deadline = time.monotonic() + float(config["budget_s"]) - (time.time() - float(job["launched_at"]))
    session = CandidateSession(
        ctl,
        call_timeout=float(config["call_timeout_s"]),
        deadline=deadline,
        output_cap=int(config["output_bytes"]),
    )
    sys.modules[job["module"]] = CandidateModule(job["module"], session)

    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "verifier",
        derandomize=True,
        database=None,
        deadline=None,  # wall-clock deadlines make verdicts load-dependent; hangs hit call_timeout_s
        max_examples=int(config["max_examples"]),
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=False,
    )
    settings.load_profile("verifier")
    with open(f"{TRUSTED_DIR}/pytest.ini", "w") as fh:
        fh.write("[pytest]\npython_files = test_*.py *_test.py\n")
    recorder = Recorder(session)
    t_tests = time.time()
    exit_code = pytest.main(
        [
            suite_root,
            "-c",
            f"{TRUSTED_DIR}/pytest.ini",
            "--rootdir",
            suite_root,
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:pastebin",
            "-p",
            "no:legacypath",
            "--color=no",
            "-W",
            "ignore::pytest.PytestUnraisableExceptionWarning",
        ],
        plugins=[recorder],
    )
    t_end = time.time()
    result = {
        "exit_code": int(exit_code),
        "counts": recorder.counts(),
        "failures": recorder.failures,
        "import_error": session.import_error,
        "calls": session.calls,
        "candidate_output": session.output.buffer.decode("utf-8", "replace"),
        "candidate_output_bytes": session.output.total,
        "runner_start_s": t_tests - float(job["launched_at"]),
        "tests_s": t_end - t_tests,
        "trusted_start_s": t_start - float(job["launched_at"]),
    }
    line = f"VERIFIER-RESULT {job['nonce']} {json.dumps(result)}\n".encode()
    view = memoryview(line)
    while view:
        view = view[os.write(result_fd, view) :]
    os._exit(0)


if __name__ == "__main__":
    main()
