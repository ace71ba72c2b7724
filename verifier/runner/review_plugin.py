"""In-container side of `verifier review`: runs a repository's own tests on one tree.

Standard library and pytest only; imported by nothing on the host (what both sides share is
review_protocol.py). Two roles, one module:

    supervise  (python3 -I, the container's main process)
        reads a job (`review_protocol.read_job`: a `ReviewHeader` line, the tree tar) from
        stdin, writes the tree to a scratch copy, starts a worker, keeps what the worker
        reports, reruns failing tests once in a fresh worker on a fresh copy, and writes ONE
        result line (`review_protocol.result_line`) to the stdout only it holds. It imports
        no repository code and is not dumpable, so nothing the tests run can read its memory
        (the nonce) or its file descriptors.
    worker     (python3 -P, started by the supervisor)
        runs pytest in the tree with a small plugin that sends each test's outcome, by node id,
        as a JSON line over an inherited pipe. Its stdout and stderr are pipes the supervisor
        drains, so console text never counts as a result.

The repository's tests import the code under test, so in the worker the code under test
shares a process with pytest and with this plugin (``isolation: in-process``): it can
forge its own outcomes there. What the split still guarantees: a worker that dies, exits
early (``os._exit(0)``) or hangs leaves its unreported tests *missing*, never passed.

Usage (inside the sandbox image): `review_protocol.COMMAND`
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from typing import Any

from .review_protocol import MODULE as IMAGE_MODULE
from .review_protocol import ReviewHeader, ReviewProject, read_job, result_line
from .review_tamper import Watch, own_functions

PR_SET_DUMPABLE = 4
MAX_EXCERPT = 1500
MAX_LOG_TAIL = 4000
MAX_REPORT_BYTES = 64 << 20
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: A worker that said "done" gets this long to exit before its process group is killed.
EXIT_GRACE_S = 5.0
#: Reruns need at least this much of the budget left.
MIN_RERUN_S = 3.0
#: This module's import name: verifier_runner.review_plugin in the image (verifier.runner... in a checkout).
MODULE = __spec__.name if __spec__ is not None else IMAGE_MODULE


# ----------------------------------------------------------------------------- supervisor


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _safe_member_path(root: str, name: str) -> str:
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or ".." in parts:
        raise ValueError(f"refusing tree path {name!r}")
    return os.path.join(root, *parts)


def write_tree(data: bytes, root: str) -> int:
    """Write the tree (an uncompressed tar made by the host) under `root`; returns files written."""
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    count = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            if member.isdir() and member.name.strip("/.") == "":
                continue  # the root itself
            path = _safe_member_path(root, member.name)
            if member.isdir():
                os.makedirs(path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if member.issym():
                os.symlink(member.linkname, path)
            elif member.isfile():
                src = tar.extractfile(member)
                assert src is not None
                with open(path, "wb") as fh:
                    shutil.copyfileobj(src, fh)
                os.chmod(path, 0o755 if member.mode & 0o111 else 0o644)
                count += 1
    return count


def write_dist_info(site: str, project: ReviewProject) -> None:
    """Metadata of the project under test, so `importlib.metadata` finds it as installed."""
    shutil.rmtree(site, ignore_errors=True)
    os.makedirs(site)
    name = project.name
    if not name:
        return
    version = project.version or "0+unknown"
    stem = f"{name.replace('-', '_')}-{version.replace('-', '_')}.dist-info"
    info = os.path.join(site, stem)
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    with open(os.path.join(info, "INSTALLER"), "w", encoding="utf-8") as fh:
        fh.write("verifier-review\n")
    groups = project.entry_points
    if groups:
        with open(os.path.join(info, "entry_points.txt"), "w", encoding="utf-8") as fh:
            for group, entries in sorted(groups.items()):
                fh.write(f"[{group}]\n")
                for key, value in sorted(entries.items()):
                    fh.write(f"{key} = {value}\n")
                fh.write("\n")


class _Drain(threading.Thread):
    """Reads a pipe to its end; keeps the last `keep` bytes (or, for reports, every line)."""

    def __init__(self, fd: int, keep: int, lines: bool) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.keep = keep
        self.lines = lines
        self.buf = bytearray()
        self.total = 0
        self.records: list[bytes] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        pending = bytearray()
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self.lock:
                self.total += len(chunk)
                if not self.lines:
                    self.buf += chunk
                    if len(self.buf) > 2 * self.keep:
                        del self.buf[: len(self.buf) - self.keep]
                    continue
                if self.total > MAX_REPORT_BYTES:
                    continue  # the worker floods its report pipe: keep what came first
                pending += chunk
                *done, rest = pending.split(b"\n")
                self.records.extend(bytes(d) for d in done)
                pending = bytearray(rest)
        os.close(self.fd)

    def snapshot(self) -> tuple[list[bytes], bytes, int]:
        with self.lock:
            return list(self.records), bytes(self.buf[-self.keep :]), self.total


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_worker(header: ReviewHeader, args: list[str], deadline: float) -> dict[str, Any]:
    """One pytest session in a fresh worker process; what it reported, and how it ended."""
    work = header.work_dir
    report_r, report_w = os.pipe()
    out_r, out_w = os.pipe()
    env = {
        "PATH": SAFE_PATH,
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join(header.pythonpath),
    }
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-P", "-B", "-m", MODULE, "worker", str(report_w)],
        stdin=subprocess.PIPE,
        stdout=out_w,
        stderr=out_w,
        cwd=work,
        env=env,
        pass_fds=(report_w,),
        start_new_session=True,  # its process group: everything it starts dies with it
    )
    os.close(report_w)
    os.close(out_w)
    reports = _Drain(report_r, 0, lines=True)
    output = _Drain(out_r, MAX_LOG_TAIL, lines=False)
    reports.start()
    output.start()
    assert proc.stdin is not None
    try:
        job = {"args": [*header.pytest_args, *args], "work_dir": work, "hypothesis": header.hypothesis}
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except OSError:
        pass  # it died before reading its arguments; its exit says why
    timed_out = False
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        proc.wait()
    _kill_group(proc.pid)  # leftovers of the tests (background processes) end with the session
    reports.join(timeout=2.0)
    output.join(timeout=2.0)
    records = reports.snapshot()[0]
    _, tail, total = output.snapshot()
    return {
        "records": [r.decode("utf-8", "replace") for r in records],
        "returncode": proc.returncode,
        "timed_out": timed_out,
        "log_tail": tail.decode("utf-8", "replace"),
        "log_bytes": total,
        "duration_s": time.monotonic() - started,
    }


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """The worker's JSON lines -> collected items, per-test results, collection errors."""
    collected: list[Any] | None = None
    results: dict[str, Any] = {}
    collect_errors: list[Any] = []
    exit_status: int | None = None
    tampered: list[str] = []
    bad = 0
    for line in raw["records"]:
        try:
            rec = json.loads(line)
            kind = rec["ev"]
            if kind == "collected":
                collected = [[str(i), str(f), None if n is None else int(n), str(d)] for i, f, n, d in rec["items"]]
            elif kind == "tampered":
                tampered.extend(str(w)[:200] for w in rec["what"][:50])
            elif kind == "collect_error":
                collect_errors.append(
                    {
                        "id": str(rec["id"]),
                        "message": str(rec.get("message", ""))[:300],
                        "excerpt": str(rec.get("excerpt", ""))[-MAX_EXCERPT:],
                    }
                )
            elif kind == "test":
                results[str(rec["id"])] = {
                    "outcome": str(rec["outcome"]),
                    "when": str(rec["when"]),
                    "message": str(rec.get("message", ""))[:300],
                    "excerpt": str(rec.get("excerpt", ""))[-MAX_EXCERPT:],
                    "duration_s": float(rec.get("duration_s", 0.0)),
                }
            elif kind == "done":
                exit_status = int(rec["exit_status"])
            else:
                bad += 1
        except (ValueError, KeyError, TypeError):
            bad += 1
    return {
        "collected": collected,
        "results": results,
        "collect_errors": collect_errors,
        "exit_status": exit_status,
        "tampered": tampered,
        "returncode": raw["returncode"],
        "timed_out": raw["timed_out"],
        "log_tail": raw["log_tail"],
        "log_bytes": raw["log_bytes"],
        "bad_records": bad,
        "duration_s": raw["duration_s"],
    }


def supervise(stdin: Any, result_fd: int) -> None:
    """Read one job, run it, write the nonce-bound result line to `result_fd`."""
    received = time.monotonic()
    # A malformed job (or one of another protocol version) raises here: no nonce, no result
    # line, and the error's last line on stderr is what the host reports.
    header, tree = read_job(stdin)
    deadline = received + header.budget_s
    result: dict[str, Any] = {}
    try:
        work = header.work_dir
        files = write_tree(tree, work)
        write_dist_info(header.site_dir, header.project)
        result["files"] = files
        first = summarize(run_worker(header, list(header.select), deadline))
        runs = [first]
        failing = sorted(i for i, r in first["results"].items() if r["outcome"] in ("failed", "error"))
        if failing and header.rerun and not first["tampered"] and deadline - time.monotonic() > MIN_RERUN_S:
            write_tree(tree, work)  # the rerun starts from the same tree, not what the first run left
            runs.append(summarize(run_worker(header, failing, deadline)))
        elif failing:
            result["rerun_skipped"] = "no time left" if header.rerun else "disabled"
        result["runs"] = runs
    except Exception as exc:  # noqa: BLE001 - any failure of ours is reported, never a silent pass
        result["error"] = f"{exc.__class__.__name__}: {exc}"[:2000]
    result["supervisor_s"] = time.monotonic() - received
    view = memoryview(result_line(header.nonce, result))
    while view:
        view = view[os.write(result_fd, view) :]


def _supervise_main() -> None:
    # Not dumpable: processes of the same uid (the tests) cannot ptrace us or open
    # /proc/<pid>/mem or /proc/<pid>/fd of ours; the nonce and the result fd stay ours.
    _prctl(PR_SET_DUMPABLE, 0)
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    supervise(sys.stdin.buffer, result_fd)
    os._exit(0)


# ----------------------------------------------------------------------------- worker


def _emit_to(fd: int) -> Callable[[dict[str, Any]], None]:
    # Bound now, before any repository code runs: rebinding os.write or json.dumps later does
    # not reach the report pipe through here.
    write, dumps = os.write, json.dumps

    def emit(record: dict[str, Any]) -> None:
        view = memoryview((dumps(record) + "\n").encode("utf-8", "surrogateescape"))
        while view:
            view = view[write(fd, view) :]

    return emit


def _message(report: Any) -> str:
    """The one-line reason: the crash message, or a skip's reason."""
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])[:300]
    crash = getattr(longrepr, "reprcrash", None)
    return str(getattr(crash, "message", "") or "").split("\n")[0][:300]


def _excerpt(report: Any) -> str:
    if isinstance(getattr(report, "longrepr", None), tuple):
        return ""
    return str(getattr(report, "longreprtext", "") or "")[-MAX_EXCERPT:]


def _outcome(reports: list[Any]) -> tuple[str, str, Any]:
    """pytest's phase reports of one test -> (outcome, phase, the report that decided it)."""
    decided: tuple[str, str, Any] = ("missing", "", None)
    for rep in reports:
        xfail = getattr(rep, "wasxfail", None) is not None
        if rep.when == "setup":
            if rep.failed:
                return "error", "setup", rep
            if rep.skipped:
                return ("xfailed" if xfail else "skipped"), "setup", rep
        elif rep.when == "call":
            if rep.failed:
                decided = ("failed", "call", rep)
            elif rep.skipped:
                decided = ("xfailed" if xfail else "skipped", "call", rep)
            else:
                decided = ("xpassed" if xfail else "passed", "call", rep)
        elif rep.when == "teardown" and rep.failed and decided[0] != "failed":
            decided = ("error", "teardown", rep)
    return decided


class ReviewReporter:
    """pytest plugin: each test's outcome by node id, over the report pipe."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], work_dir: str, watch: Watch | None = None) -> None:
        self.emit = emit
        self.work_dir = work_dir
        self.phases: dict[str, list[Any]] = {}
        self.watch = watch
        self.pluginmanager: Any = None
        self._exit = os._exit  # bound before repository code runs

    def _check(self, changed: list[str]) -> None:
        """Anything changed on the reporting path: say what, and end the session here."""
        if changed:
            self.emit({"ev": "tampered", "what": changed})
            self._exit(3)

    def pytest_sessionstart(self, session: Any) -> None:
        if self.watch is not None:
            self.watch.started(session.config.pluginmanager)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.emit(
                {"ev": "collect_error", "id": report.nodeid, "message": _message(report), "excerpt": _excerpt(report)}
            )

    def pytest_collection_finish(self, session: Any) -> None:
        items = []
        for item in session.items:
            try:
                rel = os.path.relpath(str(item.path), self.work_dir)
            except (AttributeError, ValueError):
                rel = item.nodeid.split("::")[0]
            # location: where the test's function is defined (an inherited test's is its base class's file).
            where, line = item.location[0], item.location[1]
            items.append([item.nodeid, rel, None if line is None else int(line) + 1, str(where)])
        self.emit({"ev": "collected", "items": items})
        if self.watch is not None:
            self.pluginmanager = session.config.pluginmanager
            self._check(self.watch.collected(self.pluginmanager, self))

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.phases.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        reports = self.phases.pop(nodeid, [])
        outcome, when, rep = _outcome(reports)
        record: dict[str, Any] = {
            "ev": "test",
            "id": nodeid,
            "outcome": outcome,
            "when": when,
            "duration_s": round(sum(float(getattr(r, "duration", 0.0)) for r in reports), 6),
        }
        if rep is not None and outcome in ("failed", "error", "skipped"):
            record["message"] = _message(rep)
            record["excerpt"] = _excerpt(rep)
        if self.watch is not None and self.pluginmanager is not None:
            # Before the record: a test that rewrote the reporting path reports nothing.
            self._check(self.watch.changed(self.pluginmanager))
        self.emit(record)


#: This module's functions on the reporting path (fingerprinted with pytest's own).
_OWN = ("_emit_to", "_message", "_excerpt", "_outcome", "summarize")


#: The one warning our own import of Hypothesis before pytest causes (see _worker_main), for its
#: modules (hypothesis, _hypothesis_globals, ...) only: pytest matches a -W message as a literal prefix.
_PREIMPORTED_WARNINGS = tuple(
    f"ignore:Module already imported so cannot be rewritten; {prefix}:pytest.PytestAssertRewriteWarning"
    for prefix in ("hypothesis", "_hypothesis")
)


def _worker_main(report_fd: int) -> None:
    job = json.loads(sys.stdin.buffer.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    try:  # under memory pressure the kernel kills the tests, not the supervisor
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    emit = _emit_to(report_fd)
    plugins_off: list[str] = []
    if job.get("hypothesis"):
        # Imported before pytest starts: pytest would otherwise put every module of an
        # entry-point plugin's distribution through its assertion rewriter (seconds, on
        # every run, since nothing can be cached on a read-only root).
        try:
            from hypothesis import settings
        except ImportError:
            pass
        else:  # a repository's conftest that loads its own profile takes precedence
            settings.register_profile(
                "verifier-review", derandomize=True, database=None, deadline=None, print_blob=False
            )
            settings.load_profile("verifier-review")
            # pytest then warns that it cannot rewrite the modules Hypothesis' plugin brings (already
            # imported, by us): a repository's `filterwarnings = error` made that warning stop pytest
            # before it collected anything (pypa/packaging), which plain pytest never sees. Ignore
            # exactly that warning for exactly those modules; -W on the command line wins over the
            # configuration's filters, as in pytest.
            plugins_off = [arg for w in _PREIMPORTED_WARNINGS for arg in ("-W", w)]
    else:
        plugins_off = ["-p", "no:hypothesispytest"]  # the tree never mentions Hypothesis
    import pytest

    args = [
        "--rootdir",
        job["work_dir"],
        "-p",
        "no:randomly",  # test order and seeds stay the repository's, run after run
        "--continue-on-collection-errors",
        "--maxfail=0",  # every test runs: -x in addopts would leave the rest missing
        "--color=no",
        *plugins_off,
        *job["args"],
    ]
    import _pytest.runner  # noqa: F401  (the reporting path exists before the fingerprints are taken)

    watch = Watch(report_fd, own_functions(globals(), _OWN, ReviewReporter))
    status = pytest.main(args, plugins=[ReviewReporter(emit, job["work_dir"], watch)])
    emit({"ev": "done", "exit_status": int(status)})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(status))


def main(argv: list[str]) -> None:
    if argv[:1] == ["supervise"]:
        _supervise_main()
    elif argv[:1] == ["worker"] and len(argv) == 2:
        _worker_main(int(argv[1]))
    else:
        sys.exit("usage: review_plugin supervise | worker FD")


if __name__ == "__main__":
    main(sys.argv[1:])
