"""The trusted side: a small job server that runs suites with pytest and Hypothesis.

Runs as the trusted user. The parent imports pytest, Hypothesis and the harness once,
says READY, then for each job on stdin: resets the candidate side (zygote), hands it the
candidate's source, forks a trusted child that runs pytest for this job, and relays the
child's result as exactly one `VERIFIER-RESULT <nonce> {json}` line on the container's
stdout, which only this process holds. The candidate lives in other processes under
another uid (see proxy.py), so nothing it does can patch pytest, Hypothesis or this
reporter, or reach the result channel.

Usage: python3 -m verifier_runner.trusted CTL_FD [--max-jobs N]
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import sys
import time
from typing import Any, BinaryIO

import pytest

from .proxy import CandidateFault, CandidateModule, CandidateSession

TRUSTED_DIR = "/run/trusted"
SUITE_DIR = f"{TRUSTED_DIR}/suite"
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


def _write_suite(files: dict[str, str], root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
    for rel, b64 in sorted(files.items()):
        if rel.startswith("/") or ".." in rel.split("/"):
            raise ValueError(f"refusing suite path {rel!r}")
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(b64))


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            raise EOFError(f"input ended after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def _ctl(ctl: socket.socket, request: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
    # A job's child set a timeout on this socket, and O_NONBLOCK lives on the open file
    # description we share with it: make it blocking again for the parent.
    ctl.settimeout(None)
    socket.send_fds(ctl, [json.dumps(request).encode()], fds or [])
    data = ctl.recv(65536)
    if not data:
        raise EOFError("the candidate launcher is gone")
    reply: dict[str, Any] = json.loads(data)
    return reply


def run_job(job: dict[str, Any], ctl: socket.socket, received: float) -> tuple[dict[str, Any], bool]:
    """Run one job's suite against the loaded candidate. Returns (result, trouble)."""
    config = job["config"]
    deadline = time.monotonic() + float(config["budget_s"])
    session = CandidateSession(
        ctl, call_timeout=float(config["call_timeout_s"]), deadline=deadline, output_cap=int(config["output_bytes"])
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
    recorder = Recorder(session)
    t_tests = time.time()
    exit_code = pytest.main(
        [
            SUITE_DIR,
            "-c",
            f"{TRUSTED_DIR}/pytest.ini",
            "--rootdir",
            SUITE_DIR,
            # No terminal reporter: half the cost of a run, and reports carry all we use.
            "-p",
            "no:terminal",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:pastebin",
            "-p",
            "no:legacypath",
            "-W",
            "ignore::pytest.PytestUnraisableExceptionWarning",
        ],
        plugins=[recorder],
    )
    t_end = time.time()
    kinds = {f["kind"] for f in recorder.failures}
    trouble = bool(kinds & {"timeout", "oom", "candidate_died", "output_limit"}) or session.import_error is not None
    return {
        "exit_code": int(exit_code),
        "counts": recorder.counts(),
        "failures": recorder.failures,
        "import_error": session.import_error,
        "calls": session.calls,
        "candidate_output": session.output.buffer.decode("utf-8", "replace"),
        "candidate_output_bytes": session.output.total,
        "runner_start_s": t_tests - received,
        "tests_s": t_end - t_tests,
    }, trouble


def _emit(result_fd: int, nonce: str, result: dict[str, Any]) -> None:
    line = f"VERIFIER-RESULT {nonce} {json.dumps(result)}\n".encode()
    view = memoryview(line)
    while view:
        view = view[os.write(result_fd, view) :]


def _serve_one(
    job: dict[str, Any], candidate: bytes, suite: bytes, ctl: socket.socket, received: float
) -> tuple[dict[str, Any], bool]:
    """Prepare both sides, run the job in a forked trusted child; (result, recycle)."""
    reset = _ctl(ctl, {"op": "reset"})
    if not reset.get("ok"):
        return {"sandbox_error": f"the candidate side could not be reset: {reset}"}, True
    memfd = os.memfd_create("candidate")
    try:
        os.write(memfd, candidate)
        os.lseek(memfd, 0, os.SEEK_SET)
        _ctl(ctl, {"op": "load", "module": job["module"]}, [memfd])
    finally:
        os.close(memfd)
    _write_suite(json.loads(suite)["files"], SUITE_DIR)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the trusted child: runs this job's tests, then exits
        os.close(read_end)
        try:
            result, trouble = run_job(job, ctl, received)
        except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
            result, trouble = {"sandbox_error": f"the trusted runner failed: {exc.__class__.__name__}: {exc}"}, True
        with os.fdopen(write_end, "w") as fh:
            json.dump({"result": result, "trouble": trouble}, fh)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        payload = fh.read()
    _, status = os.waitpid(pid, 0)
    try:
        message = json.loads(payload)
        return message["result"], bool(message["trouble"])
    except (ValueError, KeyError):
        return {"sandbox_error": f"the trusted runner died (wait status {status})"}, True


def main() -> None:
    max_jobs = int(sys.argv[sys.argv.index("--max-jobs") + 1]) if "--max-jobs" in sys.argv else 1
    # Our stdout is the result channel: keep it for result lines, and send everything else
    # this process or pytest prints to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ctl = socket.socket(fileno=int(sys.argv[1]))
    with open(f"{TRUSTED_DIR}/pytest.ini", "w") as fh:
        fh.write("[pytest]\npython_files = test_*.py *_test.py\n")
    # Warm up: everything a job needs is imported before the first job arrives.
    import _pytest.python  # noqa: F401
    import hypothesis.strategies  # noqa: F401

    os.write(result_fd, b"VERIFIER-READY\n")
    stdin = sys.stdin.buffer
    for served in range(1, max_jobs + 1):
        line = stdin.readline()
        if not line:
            break
        received = time.time()
        job = json.loads(line)
        candidate = _read_exact(stdin, int(job["candidate_bytes"]))
        suite = _read_exact(stdin, int(job["suite_bytes"]))
        result, recycle = _serve_one(job, candidate, suite, ctl, received)
        # Tell the host when this server will exit after this job, so no job is sent to it.
        result["recycle"] = recycle or served >= max_jobs
        _emit(result_fd, str(job["nonce"]), result)
        if recycle:
            break  # any sign of trouble: this container is not reused
    os._exit(0)


if __name__ == "__main__":
    main()
