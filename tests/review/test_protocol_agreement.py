"""The review protocol: the host and the in-container supervisor agree, and it has one home.

What the host encodes (`review.sandbox_runs.payload`) is read by the supervisor's own code
(`runner/review_plugin.py`), and the supervisor's answer (`review_plugin.supervise`) is read by
the host's parser (`review.supervisor_result.parse`), without Docker: the engine tests run the same code
in the image. The guard at the end fails if the protocol's constants are written anywhere but
`verifier/runner/review_protocol.py`.
"""

from __future__ import annotations

import ast
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.fold import HOLE, names_bound_once, spelled, string_expressions
from verifier.limits import Limits
from verifier.review import sandbox_runs
from verifier.review.deps import DependencySpec, ProjectInfo
from verifier.review.gitread import MODE_EXEC, MODE_FILE, Entry
from verifier.review.supervisor_result import parse
from verifier.runner import review_plugin
from verifier.runner import review_protocol as rp
from verifier.runner.protocol import ProtocolError
from verifier.sandbox.environment import Environment

ROOT = Path(__file__).resolve().parents[2]
HOME = Path("verifier/runner/review_protocol.py")

FILES = {
    "pkg/__init__.py": Entry(MODE_FILE, b"VALUE = 1\n"),
    "tests/test_pkg.py": Entry(MODE_FILE, b"def test_ok():\n    assert True\n"),
    "run.sh": Entry(MODE_EXEC, b"#!/bin/sh\n"),
}
PROJECT = ProjectInfo(
    name="demo-lib", version="1.2", entry_points={"console_scripts": {"demo": "pkg:main"}}, import_roots=("src", "")
)


def plan(project: ProjectInfo = PROJECT) -> sandbox_runs.RunPlan:
    env = Environment(digest="d", image_id="sha256:0", image_ref="img", built=False, packages=(), spec=DependencySpec())
    return sandbox_runs.RunPlan(
        side="head",
        code_from="head",
        tests_from="head",
        files=FILES,
        tree_id="t",
        environment=env,
        project=project,
        hypothesis=True,
    )


def header(tmp_path: Path, **changes: Any) -> rp.ReviewHeader:
    fields: dict[str, Any] = {
        "nonce": "ab12cd",
        "tree_bytes": 0,
        "budget_s": 60.0,
        "pythonpath": (str(tmp_path / "site"), str(tmp_path / "work")),
        "hypothesis": False,
        "work_dir": str(tmp_path / "work"),
        "site_dir": str(tmp_path / "site"),
    }
    return rp.ReviewHeader(**(fields | changes))


# ----------------------------------------------------------------------------- host -> supervisor


def test_the_hosts_job_is_read_by_the_supervisors_code(tmp_path: Path) -> None:
    limits = Limits(timeout_s=100)
    job = sandbox_runs.payload(plan(), limits, "feedc0de", rerun=False)

    got, tree = vars(review_plugin)["read_job"](io.BytesIO(job))  # what the supervisor reads it with

    assert got == rp.ReviewHeader(
        nonce="feedc0de",
        tree_bytes=len(tree),
        budget_s=sandbox_runs.budget_s(limits),
        pythonpath=(rp.SITE_DIR, f"{rp.WORK_DIR}/src", rp.WORK_DIR),
        hypothesis=True,
        rerun=False,
        project=rp.ReviewProject("demo-lib", "1.2", {"console_scripts": {"demo": "pkg:main"}}),
        work_dir=rp.WORK_DIR,
        site_dir=rp.SITE_DIR,
    )
    assert got.version == rp.PROTOCOL == json.loads(job.split(b"\n", 1)[0])["version"]
    assert review_plugin.write_tree(tree, str(tmp_path / "work")) == len(FILES)
    for path, entry in FILES.items():
        assert (tmp_path / "work" / path).read_bytes() == entry.data
    assert os.access(tmp_path / "work" / "run.sh", os.X_OK)
    review_plugin.write_dist_info(str(tmp_path / "site"), got.project)
    info = tmp_path / "site" / "demo_lib-1.2.dist-info"
    assert "Name: demo-lib\nVersion: 1.2\n" in (info / "METADATA").read_text()
    assert (info / "entry_points.txt").read_text() == "[console_scripts]\ndemo = pkg:main\n\n"


def test_a_project_without_name_or_version_crosses_as_before(tmp_path: Path) -> None:
    job = sandbox_runs.payload(plan(ProjectInfo()), Limits(timeout_s=100), "feedc0de")
    got, _ = vars(review_plugin)["read_job"](io.BytesIO(job))
    assert got.project == rp.ReviewProject() and got.rerun and got.pythonpath == (rp.SITE_DIR, rp.WORK_DIR)
    review_plugin.write_dist_info(str(tmp_path / "site"), got.project)
    assert list((tmp_path / "site").iterdir()) == []  # no name: no .dist-info


def test_the_launch_command_starts_the_supervisor() -> None:
    assert vars(sandbox_runs)["COMMAND"] is rp.COMMAND  # what the host starts
    assert rp.COMMAND[-3:] == ("-m", rp.MODULE, "supervise")
    assert review_plugin.__name__.replace("verifier.runner.", "verifier_runner.") == rp.MODULE


# ----------------------------------------------------------------------------- supervisor -> host


def fake_worker(calls: list[list[str]]) -> Any:
    """run_worker without a process: one failing and one passing test, each run."""

    def run_worker(h: rp.ReviewHeader, args: list[str], deadline: float) -> dict[str, Any]:
        calls.append(args)
        records = [
            {"ev": "collected", "items": [["t.py::test_a", "t.py", 1, "t.py"], ["t.py::test_b", "t.py", 4, "t.py"]]},
            {"ev": "test", "id": "t.py::test_a", "outcome": "passed", "when": "call", "duration_s": 0.1},
            {"ev": "test", "id": "t.py::test_b", "outcome": "failed", "when": "call", "message": "assert 1 == 2"},
            {"ev": "done", "exit_status": 1},
        ]
        return {
            "records": [json.dumps(r) for r in records] + ["not json"],
            "returncode": 1,
            "timed_out": False,
            "log_tail": "1 failed, 1 passed",
            "log_bytes": 18,
            "duration_s": 0.5,
        }

    return run_worker


def supervise(job: bytes) -> bytes:
    read, write = os.pipe()
    try:
        review_plugin.supervise(io.BytesIO(job), write)
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as fh:
        return fh.read()


def tar_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_the_supervisors_answer_is_read_by_the_hosts_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(review_plugin, "run_worker", fake_worker(calls))
    tree = tar_of({"t.py": b"def test_a(): pass\n"})
    h = header(tmp_path, tree_bytes=len(tree), project=rp.ReviewProject("demo", "1"))

    out = supervise(rp.encode_job(h, tree))
    # The tests can write to the same stdout: a partial line before the answer hides nothing.
    result = parse(b"forged VERIFIER-REVIEW ab12cd {" + out, "ab12cd")

    assert result is not None and result.error is None
    assert result.protocol == rp.PROTOCOL and result.files == 1
    assert calls == [[], ["t.py::test_b"]]  # the failing test is rerun
    first, rerun = result.first, result.rerun
    assert first is not None and rerun is not None
    assert first.collected == [("t.py::test_a", "t.py", 1, "t.py"), ("t.py::test_b", "t.py", 4, "t.py")]
    assert {i: r.outcome for i, r in first.results.items()} == {"t.py::test_a": "passed", "t.py::test_b": "failed"}
    assert first.results["t.py::test_b"].message == "assert 1 == 2"
    assert first.exit_status == 1 and first.bad_records == 1 and first.log_tail == "1 failed, 1 passed"
    assert parse(out, "another") is None  # bound to its nonce


def test_no_rerun_is_said_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(review_plugin, "run_worker", fake_worker(calls))
    tree = tar_of({"t.py": b""})
    result = parse(supervise(rp.encode_job(header(tmp_path, tree_bytes=len(tree), rerun=False), tree)), "ab12cd")
    assert result is not None and result.rerun_skipped == "disabled" and calls == [[]]


def test_a_failure_of_the_supervisor_is_an_error_in_the_answer(tmp_path: Path) -> None:
    tree = b"not a tar" + bytes(1024)
    result = parse(supervise(rp.encode_job(header(tmp_path, tree_bytes=len(tree)), tree)), "ab12cd")
    assert result is not None and result.runs == [] and (result.error or "").startswith("ReadError")


# ----------------------------------------------------------------------------- versions and fields


def test_another_version_is_refused_on_both_sides(tmp_path: Path) -> None:
    line = json.loads(header(tmp_path).to_json())
    for version in (1, rp.PROTOCOL + 1, None, str(rp.PROTOCOL)):
        job = json.dumps(line | {"version": version}).encode() + b"\n"
        with pytest.raises(ProtocolError, match=rf"review header version {version!r}, expected {rp.PROTOCOL} "):
            review_plugin.supervise(io.BytesIO(job), -1)  # refused before anything is written
    # An answer of another version is no answer.
    out = rp.result_line("ab12cd", {"runs": []})
    assert parse(out, "ab12cd") is not None
    assert parse(out.replace(f'"protocol": {rp.PROTOCOL}'.encode(), b'"protocol": 1'), "ab12cd") is None


def test_the_header_round_trips_and_puts_its_version_first(tmp_path: Path) -> None:
    h = header(tmp_path, project=rp.ReviewProject("p", "0.1", {"g": {"n": "m:f"}}))
    assert rp.ReviewHeader.from_json(h.to_json()) == h
    assert next(iter(json.loads(h.to_json()))) == "version"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"zzz": 1}, "unknown fields \\['zzz'\\]"),
        ({"project": {"name": "p", "extra": 1}}, "project: unknown fields"),
        ({"nonce": "a b"}, "nonce"),
        ({"nonce": ""}, "nonce"),
        ({"tree_bytes": -1}, "tree_bytes"),
        ({"tree_bytes": True}, "tree_bytes"),
        ({"budget_s": "60"}, "budget_s"),
        ({"budget_s": 0}, "budget_s"),
        ({"pythonpath": "/tmp"}, "pythonpath"),
        ({"pythonpath": [1]}, "pythonpath"),
        ({"hypothesis": 1}, "booleans"),
        ({"work_dir": "tmp/work"}, "work_dir"),
        ({"site_dir": "/tmp/../etc"}, "site_dir"),
        ({"project": {"name": None}}, "project name"),
        ({"project": {"entry_points": {"g": ["x"]}}}, "entry_points"),
        ({"project": []}, "project must be an object"),
    ],
)
def test_a_malformed_header_is_refused_naming_the_field(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    raw = json.loads(header(tmp_path).to_json()) | change
    with pytest.raises(ProtocolError, match=message):
        rp.ReviewHeader.from_json(json.dumps(raw))


def test_a_missing_field_or_a_short_tree_is_refused(tmp_path: Path) -> None:
    raw = json.loads(header(tmp_path).to_json())
    del raw["nonce"]
    with pytest.raises(ProtocolError, match="nonce"):
        rp.ReviewHeader.from_json(json.dumps(raw))
    with pytest.raises(ProtocolError, match="not JSON"):
        rp.ReviewHeader.from_json(b"{")
    job = rp.encode_job(header(tmp_path, tree_bytes=10), bytes(10))
    with pytest.raises(ProtocolError, match="review tree: input ended after 4 of 10 bytes"):
        rp.read_job(io.BytesIO(job[:-6]))
    with pytest.raises(ValueError, match="header says 10 tree bytes"):
        rp.encode_job(header(tmp_path, tree_bytes=10), b"")


# ----------------------------------------------------------------------------- one home


def literal_definitions(root: Path) -> list[str]:
    """Where, outside the protocol's home, the review protocol's constants are written again:
    an assignment to `PROTOCOL` or `RESULT_PREFIX`, or the prefix or the supervisor's module
    name as a string (docstrings aside). `runner/protocol/constants.py`'s `RESULT_PREFIX` is the check
    protocol's own line (``VERIFIER-RESULT``), allowed by name and value."""
    found: list[tuple[Path, int, str]] = []
    for path in sorted(root.joinpath("verifier").rglob("*.py")):
        rel = path.relative_to(root)
        if rel == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for target in targets:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                if name == "RESULT_PREFIX" and rel == Path("verifier/runner/protocol/constants.py"):
                    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    assert node.value.value == b"VERIFIER-RESULT "
                elif name in ("PROTOCOL", "RESULT_PREFIX"):
                    found.append((rel, getattr(node, "lineno", 0), f"{name} ="))
            if isinstance(node, ast.Constant) and id(node) not in docstrings:
                text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                if isinstance(text, str) and any(s in text for s in (rp.RESULT_PREFIX, rp.MODULE)):
                    found.append((rel, getattr(node, "lineno", 0), repr(text)))
        found += built_copies(tree, rel)
    return [f"{rel}:{line}: {what}" for rel, line, what in sorted(found, key=lambda f: f[:2])]


def built_copies(tree: ast.Module, rel: Path) -> list[tuple[Path, int, str]]:
    """A constant built from pieces (`"VERIFIER-" + "REVIEW"`, an f-string, `%`, `.format`,
    `.join`, names bound to the pieces): what it spells, once per line, when no literal on that
    line already says it."""
    names = names_bound_once(tree)
    found: dict[int, str] = {}
    for node in string_expressions(tree):
        if isinstance(node, ast.Constant) or node.lineno in found:
            continue
        text = spelled(node, names)
        if any(s in piece for piece in text.split(HOLE) for s in (rp.RESULT_PREFIX, rp.MODULE)):
            literal = any(
                isinstance(c, ast.Constant)
                and isinstance(c.value, (str, bytes))
                and any(
                    s.encode() in (c.value if isinstance(c.value, bytes) else c.value.encode())
                    for s in (rp.RESULT_PREFIX, rp.MODULE)
                )
                for c in ast.walk(node)
            )
            if not literal:
                found[node.lineno] = "built: " + repr(text.replace(HOLE, "…"))
    return [(rel, line, what) for line, what in found.items()]


def test_the_review_protocol_is_written_only_in_its_home() -> None:
    found = literal_definitions(ROOT)
    assert not found, f"written outside {HOME} (import it from there instead):\n" + "\n".join(found)


def test_the_guard_sees_a_copy(tmp_path: Path) -> None:
    """The guard is not vacuous: each kind of copy it looks for is found."""
    copy = tmp_path / "verifier" / "review" / "copy.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(
        '"""VERIFIER-REVIEW in a docstring is prose."""\n'
        "PROTOCOL = 1\n"
        'RESULT_PREFIX = "VERIFIER-REVIEW"  # must match\n'
        'COMMAND = ("python3", "-m", "verifier_runner.review_plugin", "supervise")\n'
        'TOKEN = b"VERIFIER-REVIEW "\n'
        'HEAD = "VERIFIER-"\n'
        'GLUED = HEAD + "REVIEW"\n'
        "def f(nonce):\n"
        '    return f"VERIFIER-{\'REVIEW\'} {nonce}", "-".join(["VERIFIER", "REVIEW"]), "%s-REVIEW" % "VERIFIER"\n'
        'PLUGIN = "verifier_runner." + "review_plugin"\n'
    )
    assert literal_definitions(tmp_path) == [
        "verifier/review/copy.py:2: PROTOCOL =",
        "verifier/review/copy.py:3: RESULT_PREFIX =",
        "verifier/review/copy.py:3: 'VERIFIER-REVIEW'",
        "verifier/review/copy.py:4: 'verifier_runner.review_plugin'",
        "verifier/review/copy.py:5: 'VERIFIER-REVIEW '",
        "verifier/review/copy.py:7: built: 'VERIFIER-REVIEW'",
        "verifier/review/copy.py:9: built: 'VERIFIER-REVIEW …'",
        "verifier/review/copy.py:10: built: 'verifier_runner.review_plugin'",
    ]
