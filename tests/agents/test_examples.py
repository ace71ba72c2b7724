"""The examples as a user runs them: offline, scripted models, the real sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(EXAMPLE / script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=dict(os.environ))


@pytest.mark.docker
@pytest.mark.slow
def test_rubric_loop_tells_the_story_and_ends_with_a_json_summary(sandbox_image: str, _runs_db: Path) -> None:
    done = run("rubric_loop.py", "--offline")
    assert done.returncode == 0, done.stderr[-2000:]
    *story, last = done.stdout.strip().splitlines()
    outcome = json.loads(last)
    assert outcome["accepted"] is True and outcome["verdicts"] == ["needs_revision", "satisfied"]
    assert outcome["models"] == "scripted"
    text = "\n".join(story)
    assert "scripted (offline, no API key)" in text
    assert "round 0: the worker's answer" in text and "seen = set()" in text  # each round's code
    assert "round 1: the worker's answer" in text and "seen = []" in text
    assert "✗ test_examples.py::test_unhashable_nested_lists" in text
    assert "at: check([[1], [1]], [[1]])" in text and "falsifying example: test_" in text
    assert "feedback the middleware sent to the worker:" in text and "Criteria that still need work" in text
    assert "ACCEPTED" in text and f"candidate {outcome['candidate_sha256']}" in text
    assert f"evidence  {outcome['evidence_id']}" in text
    assert all(len(line) <= 80 for line in story), [line for line in story if len(line) > 80]
    # The run landed in the database `verifier runs report` reads by default.
    report = subprocess.run(
        [sys.executable, "-m", "verifier", "runs", "report", "--json"], capture_output=True, text=True, timeout=120
    )
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["runs"] == 1 and _runs_db.exists()


def test_rubric_loop_help_names_the_extra_and_docker() -> None:
    done = run("rubric_loop.py", "--help")
    assert done.returncode == 0
    assert "pip install 'sandboxed-verifier[agents]'" in done.stdout and "a running Docker" in done.stdout


@pytest.mark.docker
@pytest.mark.slow
def test_the_ported_seed_chapter_ends_accepted(sandbox_image: str) -> None:
    """The chapter's code with verified_rubric in place of RubricMiddleware + exec: fence-less
    worker prompt, scripted models, offline; the set-based first answer is rejected by the
    sandboxed suite and the revision is accepted."""
    env = {k: v for k, v in os.environ.items() if k not in ("WORKING_MODEL", "GRADER_MODEL")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "seed_chapter13.py")], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "iteration 0: needs_revision" in out and "iteration 1: satisfied" in out
    assert "decision: satisfied, with passing evidence for the final candidate in this run" in out
    assert out.strip().splitlines()[-1] == "accepted: True"


def test_the_story_shows_candidate_text_only_as_visible_text(capsys: pytest.CaptureFixture[str]) -> None:
    """Code, failure details and feedback come from the models and the candidate: escaped."""
    import importlib.util
    from types import SimpleNamespace

    from langchain_core.messages import AIMessage, HumanMessage

    from verifier.agents.recorder import RunRecorder, ToolCall
    from verifier.evidence import Evidence, Failure, FailureKind, Status
    from verifier.limits import Limits

    spec = importlib.util.spec_from_file_location("rubric_loop_story", EXAMPLE / "rubric_loop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)

    recorder = RunRecorder("sqlite://")
    hostile = "E   TypeError: \x1b[2J\u202eboom"
    failure = Failure(test_id="t.py::t", kind=FailureKind.EXCEPTION, message="m", detail_untrusted=hostile)
    ev = Evidence(
        evidence_id="e1",
        ok=False,
        status=Status.FAILED,
        reason="0 of 1 tests passed",
        candidate_sha256="c",
        suite_sha256="s",
        image_id="i",
        limits=Limits(),
        verifier_version="0",
        failures=[failure],
    )
    call = ToolCall("run", 0, "e1", "c", True, False, "failed", False, 0.1, reason="0 of 1 tests passed")
    recorder.record(ev, call)
    recorder.on_evaluation({"grading_run_id": "run", "iteration": 0, "result": "needs_revision", "explanation": "x"})
    result = {
        "messages": [
            HumanMessage("task"),
            AIMessage("def find_duplicates(v):\n    return '\x1b]0;title\x07'\n"),
            HumanMessage("fix \x1b[31mthis\u202e", name="rubric_grader"),
        ]
    }
    outcome = {
        "accepted": False,
        "reason": "r",
        "candidate_sha256": None,
        "evidence_id": None,
        "grading_run_id": "run",
        "thread_id": "t",
    }
    module.tell(module.Story(), outcome, result, SimpleNamespace(recorder=recorder), online=False)
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b[2J\\u202eboom" in text and "\\x1b]0;title\\x07" in text and "\\x1b[31mthis\\u202e" in text


@pytest.mark.docker
@pytest.mark.slow
def test_the_dataframe_task_through_the_rubric_loop(sandbox_image: str, _runs_db: Path) -> None:
    """Issue 24 §5: a suite with packages (numpy, pandas) through the evidence tool and the
    offline rubric loop: the wrong z-scores are sent back with the evidence, the fixed answer
    is accepted on passing evidence for its exact bytes."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLE.parent / "dataframes" / "grading_loop.py"), "--offline"],
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    *story, last = done.stdout.strip().splitlines()
    outcome = json.loads(last)
    assert outcome["accepted"] is True and outcome["verdicts"] == ["needs_revision", "satisfied"]
    text = "\n".join(story)
    assert "dataframes, graded with sandboxed evidence" in text and "wrong/sample_std.py" not in text
    assert "sample_std.py, then" in text and "ddof=1" in text  # the first round's code is shown
    assert "✗ test_dataframes.py::" in text and "ACCEPTED" in text
