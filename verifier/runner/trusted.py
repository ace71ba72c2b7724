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
import importlib
import importlib.util
import json
import os
import shutil
import socket
import sys
import time
import traceback
from typing import Any, BinaryIO

from .proxy import CandidateFault, CandidateModule, CandidateSession
from .results import MAX_DETAIL, Results

TRUSTED_DIR = "/run/trusted"
SUITE_DIR = f"{TRUSTED_DIR}/suite"


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


def _detail(exc: BaseException) -> str:
    """A failure's text as pytest would end it: the traceback, then `E   Type: message` lines."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    lines = [f"E   {type(exc).__name__}: {exc}"] + [f"E   {note}" for note in getattr(exc, "__notes__", [])]
    return tb[-MAX_DETAIL:] + "\n" + "\n".join(lines)


def run_direct(recorder: Results, session: CandidateSession) -> int:
    """The direct runner: import each test file and call its `test_*` functions in order.

    For suites that declare `runner = "direct"`: plain functions without fixtures, marks or
    parametrisation (HumanEval's check()). Same trusted process, same candidate boundary, no
    pytest start-up cost. Anything it cannot run as such is an error, never a pass.
    """
    tests: list[tuple[str, Any]] = []
    for rel in sorted(os.listdir(SUITE_DIR)):
        if not (rel.endswith(".py") and (rel.startswith("test_") or rel.endswith("_test.py"))):
            continue
        spec = importlib.util.spec_from_file_location(f"verifier_suite_{rel[:-3]}", os.path.join(SUITE_DIR, rel))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - a module that fails to import is a collection error
            recorder.collect_errors += 1
            kind = session.import_fault.kind if session.import_error is not None else "collection_error"
            recorder.fail(rel, kind, "the suite could not be collected", _detail(exc))
            continue
        for name, fn in vars(module).items():
            if name.startswith("test") and callable(fn) and getattr(fn, "__module__", None) == module.__name__:
                tests.append((f"{rel}::{name}", fn))
    recorder.collected = len(tests)
    for nodeid, fn in tests:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - every way a test ends is recorded
            leaf = exc
            if isinstance(exc, CandidateFault):
                kind, why = exc.kind, str(exc)[:300]
            elif getattr(exc, "verifier_raised_by_candidate", None):
                kind, why = "exception", f"the candidate raised {exc.verifier_raised_by_candidate}"  # type: ignore[attr-defined]
            elif isinstance(leaf, AssertionError):
                kind, why = "assertion", "an assertion failed"
            else:
                kind, why = "exception", f"{type(exc).__name__} raised"
            recorder.outcomes[nodeid] = "failed"
            recorder.fail(nodeid, kind, why, _detail(exc))
        else:
            recorder.outcomes[nodeid] = "passed"
    return 0 if tests and not recorder.failures else 1


def run_job(job: dict[str, Any], ctl: socket.socket, received: float) -> tuple[dict[str, Any], bool]:
    """Run one job's suite against the loaded candidate. Returns (result, trouble)."""
    config = job["config"]
    deadline = time.monotonic() + float(config["budget_s"])
    session = CandidateSession(
        ctl, call_timeout=float(config["call_timeout_s"]), deadline=deadline, output_cap=int(config["output_bytes"])
    )
    sys.modules[job["module"]] = CandidateModule(job["module"], session)
    if config.get("uses_hypothesis", True):
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
    if config.get("runner") == "direct":
        recorder = Results(session)
        t_tests = time.time()
        exit_code = run_direct(recorder, session)
        return _job_result(recorder, session, exit_code, t_tests, received, "direct")
    import pytest

    from .pytest_plugin import Recorder

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
    return _job_result(recorder, session, int(exit_code), t_tests, received, "pytest")


def _job_result(
    recorder: Results, session: CandidateSession, exit_code: int, t_tests: float, received: float, runner: str
) -> tuple[dict[str, Any], bool]:
    t_end = time.time()
    kinds = {f["kind"] for f in recorder.failures}
    trouble = bool(kinds & {"timeout", "oom", "candidate_died", "output_limit"}) or session.import_error is not None
    return {
        "runner": runner,
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


def _reset(ctl: socket.socket) -> bool:
    """Kill every candidate-uid process and wipe the candidate's writable places."""
    try:
        return bool(_ctl(ctl, {"op": "reset"}).get("ok"))
    except (OSError, EOFError, ValueError):
        return False


def _serve_one(
    job: dict[str, Any], candidate: bytes, suite: bytes, ctl: socket.socket, received: float
) -> tuple[dict[str, Any], bool]:
    """Prepare both sides, run the job in a forked trusted child; (result, recycle).

    The candidate side was reset before this job (at start-up, or right after the previous
    job's result went out), so no process or file of an earlier candidate is left.
    """
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


def serve(ctl: socket.socket, argv: list[str]) -> None:
    """Serve up to --max-jobs jobs from stdin; --preload names modules to import before READY."""
    max_jobs = int(argv[argv.index("--max-jobs") + 1]) if "--max-jobs" in argv else 1
    preload = argv[argv.index("--preload") + 1] if "--preload" in argv else "pytest,hypothesis"
    # Our stdout is the result channel: keep it for result lines, and send everything else
    # this process or pytest prints to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(f"{TRUSTED_DIR}/pytest.ini", "w") as fh:
        fh.write("[pytest]\npython_files = test_*.py *_test.py\n")
    # Warm up: what jobs need is imported before the first job arrives.
    for name in filter(None, preload.split(",")):
        importlib.import_module({"pytest": "_pytest.python", "hypothesis": "hypothesis.strategies"}.get(name, name))
    if not _reset(ctl):
        os._exit(3)
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
        # Reset now, off the next job's critical path; a failed reset ends this server, and
        # the host retries a job that meets a container that is gone.
        if not _reset(ctl):
            break
    os._exit(0)
