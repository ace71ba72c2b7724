"""The command line speaks with one voice (issue 22, section 6): every bad input is one line that
names the option and what it allows, exit 2, no traceback and no box; --help lists the allowed
values; with --json, stdout always holds exactly one JSON document."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE, SUITE
from tests.fold import HOLE, names_bound_once, spelled, string_expressions
from verifier.cli import app

ROOT = Path(__file__).resolve().parents[2]
GOOD = str(EXAMPLE / "good.py")
CHECK = ["check", GOOD, "--suite", str(SUITE), "--no-build"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), terminal_width=200, env={"COLUMNS": "200"})


def assert_one_line(done: Any, *words: str) -> str:
    """Exit 2, nothing on stdout, one `error:` line on stderr holding every word."""
    assert done.exit_code == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert "Traceback" not in done.stderr and "╭" not in done.stderr and "Usage:" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return str(lines[0])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([*CHECK, "--timeout", "abc"], ["--timeout 'abc'", "number"]),
        (["check", GOOD], ["--suite is required", "pytest files"]),
        (["check"], ["CANDIDATE is required"]),
        ([*CHECK, "--memory", "lots"], ["--memory 'lots'", "512m"]),
        ([*CHECK, "--memory", "1k"], ["--memory 1024", "greater than or equal to"]),
        ([*CHECK, "--timeout", "-1"], ["--timeout -1.0", "greater than 0"]),
        ([*CHECK, "--runtime", "kata"], ["--runtime", "'kata' is not one of 'runc', 'gvisor'"]),
        ([*CHECK, "--no-such-option"], ["No such option: --no-such-option"]),
        (["image", "build", "--base", "pip"], ["--base", "'auto', 'debootstrap', 'registry'"]),
        (["image", "info", "--base", "pip"], ["--base", "'auto', 'debootstrap', 'registry'"]),
        (["bench", "io", "s.jsonl", "--policy", "warm"], ["--policy", "'reuse', 'fresh', 'cold'"]),
        (["bench", "humaneval", "s.jsonl", "--runtime", "kata"], ["--runtime", "'runc', 'gvisor'"]),
        (["review", ".", "--base", "main", "--tests", "mine"], ["--tests", "'head', 'base'"]),
        (["review", ".", "--base", "main", "-f", "html"], ["--format", "'markdown', 'json', 'junit', 'sarif'"]),
        (["review", "."], ["--base is required"]),
        (["review", ".", "--base", "main", "--memory", "lots"], ["--memory 'lots'"]),
        (["runs", "override", "r1", "--verdict", "maybe"], ["--verdict", "'rejected', 'accepted'"]),
        (["runs", "report", "--db", "notaurl"], ["--db", "not a database URL", "sqlite:///"]),
    ],
)
def test_every_bad_input_is_one_line_naming_the_option(args: list[str], words: list[str]) -> None:
    assert_one_line(invoke(*args), *words)


def test_a_missing_problems_file_is_named(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n')
    missing = tmp_path / "none.jsonl"
    assert_one_line(invoke("bench", "humaneval", str(samples), "--problems", str(missing)), "--problems", "not exist")
    assert_one_line(invoke("bench", "io", str(samples), "--problems", str(missing)), "--problems", "not exist")
    assert_one_line(invoke("bench", "humaneval", str(missing)), "SAMPLES", "does not exist")


def test_the_one_line_is_what_a_user_sees_in_a_terminal() -> None:
    """The same through the installed entry point (click's own error path, not the test runner's)."""
    done = subprocess.run(
        [sys.executable, "-m", "verifier", *CHECK, "--timeout", "abc"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert re.fullmatch(r"error: --timeout 'abc': should be a valid number.*\(see .* check --help\)\n", done.stderr)


def test_help_lists_the_allowed_values_and_no_bool_metavar() -> None:
    helps = {
        ("check",): ["<runc|gvisor>", "charged seconds"],
        ("bench", "humaneval"): ["<reuse|fresh|cold>", "<runc|gvisor>"],
        ("bench", "io"): ["<reuse|fresh|cold>", "--ray", "--report"],
        ("bench", "report"): ["RESULTS DIR", "--summary"],
        ("review",): ["<head|base>", "markdown|json|junit|sarif"],
        ("image", "build"): ["<auto|debootstrap|registry>"],
        ("image", "info"): ["<auto|debootstrap|registry>"],
        ("runs", "override"): ["<rejected|accepted>"],
        ("runs", "list"): ["--limit"],
        ("runs", "show"): ["RUN_ID"],
    }
    for command, words in helps.items():
        done = invoke(*command, "--help")
        assert done.exit_code == 0, done.output
        for word in words:
            assert word in done.stdout, (command, word)
        assert "<bool>" not in done.stdout, (command, done.stdout)
        (usage,) = [line for line in done.stdout.splitlines() if "Usage:" in line]
        assert "{" not in usage, usage  # arguments by their upper-case names, not typer's {name}
    usage = invoke("check", "--help").stdout
    assert "check [OPTIONS] CANDIDATE" in usage and "wall-clock limit" not in usage.lower()


def test_typer_is_bounded_to_the_version_the_help_is_tested_with() -> None:
    import typer
    from packaging.requirements import Requirement

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (spec,) = [Requirement(d) for d in pyproject["project"]["dependencies"] if d.startswith("typer")]
    assert any(s.operator == "<" for s in spec.specifier), "typer needs an upper bound: its help rendering changes"
    assert spec.specifier.contains(typer.__version__)


def test_no_command_prints_its_own_error_line() -> None:
    """Failing has one home (verifier/cli/common.py): no other CLI module prints `[red]error:`."""
    for path in (ROOT / "verifier" / "cli").glob("*.py"):
        if path.name != "common.py":
            assert "[red]error" not in path.read_text(), path
            assert "from verifier.cli.check import _" not in path.read_text(), path


#: The CLI's one voice on the terminal's stderr, and the few other modules that write there, each
#: for its own reason (how many writers each holds): progress bars and the server's log lines.
STDERR_WRITERS = {
    "verifier/cli/common.py": 1,  # the one voice: `fail`, warnings, notes
    "verifier/batch.py": 1,  # the bench's progress bar
    "verifier/agents/progress.py": 1,  # an agent run's progress
    "verifier/serve/server.py": 1,  # the server's own log lines (`say`)
}
#: `error:` at the start of a line, after any rich markup (the one voice's word). In a module that
#: writes to stderr, or in the CLI, also in any case (`ERROR:`, `Error:`); elsewhere those are other
#: texts' words (pip's output read by environment.py, the agent sandbox's answers to its model).
ERROR_LINE = re.compile(r"(\s*\[[^\]]*\])*\s*error\s*:")
ANY_CASE = re.compile(ERROR_LINE.pattern, re.IGNORECASE)


def stderr_writers(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, how) of every way the host side writes to its stderr: `sys.stderr` (or
    `__stderr__`, or imported from sys), `stderr=True` / `err=True` (rich, typer, click),
    `os.write(2, ...)` and `open(2, ...)`."""
    sys_names = {"sys"}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            sys_names |= {a.asname or a.name for a in node.names if a.name == "sys"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            found += [(node.lineno, f"from sys import {a.name}") for a in node.names if "stderr" in a.name]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("stderr", "__stderr__"):
            if isinstance(node.value, ast.Name) and node.value.id in sys_names:
                found.append((node.lineno, f"sys.{node.attr}"))
        elif isinstance(node, ast.Call):
            for k in node.keywords:
                if k.arg in ("stderr", "err") and isinstance(k.value, ast.Constant) and k.value.value is True:
                    found.append((node.lineno, f"{k.arg}=True"))
            func = ast.unparse(node.func)
            first = node.args[0] if node.args else None
            if (
                func in ("os.write", "open", "os.fdopen", "io.open")
                and isinstance(first, ast.Constant)
                and first.value == 2
            ):
                found.append((node.lineno, f"{func}(2, ...)"))
    return sorted(found)


def error_lines(tree: ast.Module, *, any_case: bool = False) -> list[tuple[int, str]]:
    """(line, text) of every string expression that spells a line starting with `error:` (after
    rich markup), also built from pieces: the one voice's words, said by someone else."""
    names = names_bound_once(tree)
    found: dict[int, str] = {}
    pattern = ANY_CASE if any_case else ERROR_LINE
    for node in string_expressions(tree):
        text = spelled(node, names)
        if node.lineno not in found and any(pattern.match(p) for p in [text, *text.split(HOLE)] if p):
            found[node.lineno] = text.replace(HOLE, "…")
    return sorted(found.items())


def host_modules() -> list[tuple[str, ast.Module]]:
    """Every module of verifier/ that runs on the host (runner/ runs in the image, its stderr is
    the container's)."""
    package = ROOT / "verifier"
    return [
        (p.relative_to(ROOT).as_posix(), ast.parse(p.read_text(), filename=str(p)))
        for p in sorted(package.rglob("*.py"))
        if "runner" not in p.relative_to(package).parts
    ]


def test_only_the_one_voice_writes_error_lines_to_stderr() -> None:
    """`print("error: ...", file=sys.stderr)`, `sys.stderr.write(f"ERROR: {x}")`,
    `typer.echo("err" + "or: x", err=True)`: a second voice, found however it is spelled."""
    problems: list[str] = []
    for path, tree in host_modules():
        writers = stderr_writers(tree)
        if len(writers) > STDERR_WRITERS.get(path, 0):
            problems += [f"{path}:{line}: writes to stderr ({how})" for line, how in writers]
        if path != "verifier/cli/common.py":
            any_case = bool(writers) or path.startswith("verifier/cli/")
            problems += [
                f"{path}:{line}: an error line {text!r}" for line, text in error_lines(tree, any_case=any_case)
            ]
    assert not problems, "failing has one home, verifier/cli/common.py (`fail`):\n" + "\n".join(problems)
    counted = {path: len(stderr_writers(tree)) for path, tree in host_modules()}
    assert all(counted[path] == n for path, n in STDERR_WRITERS.items()), counted  # none allowed in vain


def test_the_voice_guard_sees_a_second_voice() -> None:
    sample = ast.parse(
        "import sys, os, typer\n"
        "import sys as system\n"
        "from sys import stderr as err\n"
        "def f(x):\n"
        "    print('error: bad', file=sys.stderr)\n"  # 5
        "    system.stderr.write(f'ERROR: {x}')\n"  # 6
        "    typer.echo('err' + 'or: ' + x, err=True)\n"  # 7
        "    os.write(2, b'[red]error:[/] x')\n"  # 8
        "    print('%s: %s' % ('error', x))\n"  # 9
        "    print('internal error: x', 'an error: x')\n"  # 10: not at a line's start
    )
    assert [line for line, _ in stderr_writers(sample)] == [3, 5, 6, 7, 8]
    assert [line for line, _ in error_lines(sample, any_case=True)] == [5, 6, 7, 8, 9]
    assert [line for line, _ in error_lines(sample)] == [5, 7, 8, 9]


# -- --json: one document on stdout, whatever happens ------------------------------------------
def one_document(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)  # raises unless stdout is exactly one JSON document
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ([*CHECK, "--json", "--timeout", "abc"], "--timeout"),
        ([*CHECK, "--timeout", "abc", "--json"], "--timeout"),
        ([*CHECK, "--json", "--memory", "lots"], "--memory"),
        ([*CHECK, "--json", "--timeout", "0"], "--timeout"),
        ([*CHECK, "--json", "--runtime", "kata"], "--runtime"),
        (["check", GOOD, "--json"], "--suite"),
        (["runs", "report", "--json", "--db", "notaurl"], "--db"),
        (["runs", "list", "--json", "--db", "notaurl"], "--db"),
    ],
)
def test_json_bad_input_is_one_error_document(args: list[str], option: str) -> None:
    done = invoke(*args)
    assert done.exit_code == 2
    doc = one_document(done.stdout)
    assert doc["ok"] is False and doc["status"] == "invalid_input" and doc["fault"] == "input"
    assert doc["option"] == option and option in doc["reason"] and doc["exit_code"] == 2
    assert len(done.stderr.strip().splitlines()) == 1  # the same line for a person


def test_json_bad_candidate_is_invalid_input_evidence(tmp_path: Path) -> None:
    done = invoke("check", str(tmp_path / "missing.py"), "--suite", str(SUITE), "--json")
    assert done.exit_code == 2
    doc = one_document(done.stdout)
    assert doc["status"] == "invalid_input" and doc["evidence_id"]  # evidence, as before


def unreachable_engine(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-such-docker.sock"}


@pytest.mark.parametrize(
    "args",
    [
        ["check", GOOD, "--suite", str(SUITE), "--json"],
        ["check", str(ROOT / "tests" / "fixtures" / "shapes"), "--suite", str(SUITE), "--json"],
        ["image", "info", "--json"],
    ],
)
def test_json_with_the_engine_unreachable_is_one_error_document(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "verifier", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=unreachable_engine(tmp_path),
    )
    assert done.returncode == 2, done.stderr
    doc = one_document(done.stdout)
    assert doc["ok"] is False and doc["status"] == "infra_error" and doc["fault"] == "verifier"
    assert "Docker engine" in doc["reason"] and doc["option"] is None
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in done.stderr


def test_without_json_the_engine_unreachable_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "verifier", "check", GOOD, "--suite", str(SUITE)],
        capture_output=True,
        text=True,
        timeout=120,
        env=unreachable_engine(tmp_path),
    )
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Docker engine" in done.stderr


# -- a folder candidate gets the image like a file candidate --------------------------------
@pytest.mark.parametrize("candidate", [EXAMPLE / "good.py", ROOT / "tests" / "fixtures" / "shapes"])
def test_check_makes_sure_of_the_image_for_files_and_folders(candidate: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.errors import SandboxUnavailable

    asked: list[bool] = []

    def ensure_image(*args: Any, **kwargs: Any) -> str:
        asked.append(True)
        raise SandboxUnavailable("stand-in: the image could not be built")

    monkeypatch.setattr("verifier.cli.check.ensure_image", ensure_image)
    assert_one_line(invoke("check", str(candidate), "--suite", str(SUITE)), "stand-in")
    assert asked == [True]


# -- runs list / show ------------------------------------------------------------------------
@pytest.fixture
def runs_db(tmp_path: Path) -> str:
    pytest.importorskip("sqlalchemy")
    from verifier.agents.recorder import RunRecorder, ToolCall

    url = f"sqlite:///{tmp_path}/runs.db"
    rec = RunRecorder(url)
    rec.on_evaluation(
        {"grading_run_id": "run-a", "iteration": 0, "result": "needs_revision", "explanation": "a bug"}, thread_id="t1"
    )
    rec.on_evaluation({"grading_run_id": "run-a", "iteration": 1, "result": "satisfied"}, thread_id="t1")
    rec.on_evaluation({"grading_run_id": "run-b", "iteration": 0, "result": "satisfied"}, thread_id="t2")
    from tests.agents.test_recorder import evidence

    call = ToolCall("run-a", 1, "e1", "c" * 64, True, True, "passed", False, 0.5)
    rec.record(evidence("e1"), call)
    rec.override("run-b", "rejected", "a person disagreed")
    rec.close()
    return url


def test_runs_list_names_the_runs_latest_first(runs_db: str) -> None:
    done = invoke("runs", "list", "--db", runs_db, "--json")
    assert done.exit_code == 0, done.output
    runs = json.loads(done.stdout)
    assert [r["grading_run_id"] for r in runs] == ["run-b", "run-a"]
    a = runs[1]
    assert (a["rounds"], a["final_result"], a["tool_calls"], a["thread_id"]) == (2, "satisfied", 1, "t1")
    assert runs[0]["override"] == "rejected"
    assert [
        r["grading_run_id"]
        for r in json.loads(invoke("runs", "list", "--db", runs_db, "--json", "--limit", "1").stdout)
    ] == ["run-b"]
    human = invoke("runs", "list", "--db", runs_db)
    assert human.exit_code == 0 and "run-a" in human.stdout and "run-b" in human.stdout


def test_runs_show_tells_one_run(runs_db: str) -> None:
    done = invoke("runs", "show", "run-a", "--db", runs_db, "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert [e["result"] for e in doc["evaluations"]] == ["needs_revision", "satisfied"]
    assert [c["evidence_id"] for c in doc["tool_calls"]] == ["e1"] and doc["override"] is None
    human = invoke("runs", "show", "run-b", "--db", runs_db)
    assert human.exit_code == 0 and "rejected" in human.stdout and "a person disagreed" in human.stdout
    assert_one_line(invoke("runs", "show", "no-such-run", "--db", runs_db), "no grading run no-such-run")
    missing = invoke("runs", "show", "no-such-run", "--db", runs_db, "--json")
    assert missing.exit_code == 2 and one_document(missing.stdout)["option"] == "RUN_ID"
