"""The examples as a user runs them: offline, scripted models, the real sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(EXAMPLE / script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=dict(os.environ))


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
