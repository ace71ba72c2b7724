from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from verifier.agents.candidates import (
    CodeBlock,
    NoCandidate,
    StateFile,
    candidate_in_text,
    grader_state,
    latest_code_block,
    read_candidate,
    read_latest,
)
from verifier.hashing import sha256_bytes

GOOD = "def find_duplicates(values):\n    return []\n"


def test_latest_code_block_is_the_working_models_last_answer() -> None:
    messages = [
        HumanMessage("task"),
        AIMessage("v1\n```python\ndef f(): return 1\n```"),
        HumanMessage("revise", name="rubric_grader"),
        AIMessage("v2\n```python\ndef f(): return 0\n```\nand\n```python\ndef f(): return 2\n```"),
    ]
    assert latest_code_block(messages) == "def f(): return 2\n"
    assert latest_code_block([*messages, AIMessage("no code this time")]) is None


def test_a_fence_less_reply_that_parses_is_the_candidate() -> None:
    """The seed chapter's worker prompt: 'Return only executable Python source code, without Markdown fences.'"""
    assert candidate_in_text(GOOD) == GOOD
    assert CodeBlock()({"messages": [HumanMessage("task"), AIMessage(GOOD)]}) == GOOD


@pytest.mark.parametrize("tag", ["python", "Python", "PYTHON", "py", "Py", "python3", ""])
def test_python_fences_in_any_case_and_untagged(tag: str) -> None:
    assert candidate_in_text(f"Here:\n```{tag}\n{GOOD}```\nDone.") == GOOD


def test_capitalised_fence_then_prose_then_a_second_block_gives_the_second_block() -> None:
    """The old reader missed ```Python and took the prose between the blocks as the candidate."""
    second = "def find_duplicates(values):\n    return list(values)\n"
    text = f"```Python\n{GOOD}```\nThat was v1; the fixed version is below.\n```python\n{second}```\n"
    assert candidate_in_text(text) == second


def test_the_last_block_that_parses_wins_over_a_later_broken_one() -> None:
    text = f"```python\n{GOOD}```\nUsage:\n```python\n>>> find_duplicates([1, 1])\n[1]\n```"
    assert candidate_in_text(text) == GOOD


def test_tilde_fences_and_other_languages() -> None:
    assert candidate_in_text(f"~~~python\n{GOOD}~~~") == GOOD
    assert candidate_in_text(f"```bash\npip install x\n```\n```python\n{GOOD}```") == GOOD


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I could not finish the task.", "no code block and is not Python source"),
        ("Done", "no code block and is not Python source"),  # parses as a bare name, defines nothing
        ("```bash\nls\n```", "none tagged python"),
        ("```python\ndef f(:\n```", "parses as Python"),
    ],
)
def test_no_candidate_says_why_and_names_the_fix(text: str, words: str) -> None:
    with pytest.raises(NoCandidate) as info:
        candidate_in_text(text)
    assert words in info.value.reason
    assert "StateFile" in info.value.reason and "reader" in info.value.reason


def test_state_file_reads_the_deep_agents_file_state() -> None:
    state = {"files": {"/solution.py": {"content": "def f():\n    return 3\n", "encoding": "utf-8"}}}
    assert StateFile("/solution.py")(state) == "def f():\n    return 3\n"
    assert StateFile("/old.py")({"files": {"/old.py": {"content": ["a = 1", "b = 2"]}}}) == "a = 1\nb = 2"
    code, missing = read_latest(StateFile("/other.py"), state)
    assert code is None and missing is not None and "/other.py" in missing and "/solution.py" not in missing
    latest = read_candidate(StateFile("/other.py"), state)  # the agent's file names: untrusted detail only
    assert latest.missing == missing and "/solution.py" in latest.missing_untrusted


def test_a_custom_reader_returning_none_gets_a_reason_naming_the_fix() -> None:
    code, missing = read_latest(lambda state: None, {})
    assert code is None and missing is not None and "StateFile" in missing


def test_grader_state_binds_candidate_and_pass() -> None:
    state = {"messages": [AIMessage("```python\nx = 1\n```")]}
    bound = grader_state(CodeBlock(), state, 2, scope="s", thread_id="t")
    assert bound == {
        "candidate_source": "x = 1\n",
        "candidate_sha256": sha256_bytes(b"x = 1\n"),
        "candidate_missing": None,
        "candidate_missing_untrusted": "",
        "grading_scope": "s",
        "grading_thread_id": "t",
        "grading_iteration": 2,
    }
    missing = grader_state(CodeBlock(), {"messages": [AIMessage("sorry")]}, 0)
    assert missing["candidate_source"] is None and "StateFile" in missing["candidate_missing"]


def test_a_folder_in_the_file_state_is_a_multi_file_candidate(tmp_path: Path) -> None:
    import io

    from verifier import Candidate, Verifier
    from verifier.agents.candidates import StateFiles
    from verifier.agents.tools import make_run_test_suite
    from verifier.runner.protocol import read_job
    from verifier.sandbox.fake import FakeBackend, answer

    files = {
        "/src/shapes/__init__.py": {"content": "from shapes.area import square\n"},
        "/src/shapes/area.py": {"content": ["def square(x):", "    return x * x"]},  # older deepagents: lines
        "/notes.md": {"content": "not part of the candidate"},
    }
    tree = StateFiles("/src/")({"files": files})
    assert tree == {
        "shapes/__init__.py": "from shapes.area import square\n",
        "shapes/area.py": "def square(x):\n    return x * x",
    }
    state = grader_state(StateFiles("/src"), {"files": files}, 0)
    assert state["candidate_sha256"] == Candidate.from_files(tree).sha256
    jobs = []

    def handler(job):  # type: ignore[no-untyped-def]
        jobs.append(job)
        return answer(job)

    suite = tmp_path / "suite"  # the tests may import the modules the suite declares (a package: all of it)
    suite.mkdir()
    (suite / "suite.toml").write_text('modules = ["shapes"]\n')
    (suite / "test_area.py").write_text(
        "from shapes.area import square\n\n\ndef test_square():\n    assert square(3) == 9\n"
    )
    tool = make_run_test_suite(suite, verifier=Verifier(backend=FakeBackend(handler), image="x"), cache=False)
    ev = tool.verify(None, state)
    assert ev.ok and ev.candidate_kind == "tree" and ev.candidate_sha256 == state["candidate_sha256"]
    header, candidate, _ = read_job(io.BytesIO(jobs[0].stdin))  # type: ignore[misc]
    assert header.modules == ["shapes", "shapes.area"]
    assert candidate == {k: v.encode() for k, v in tree.items()}
    with pytest.raises(NoCandidate, match="no Python file under /lib/"):
        StateFiles("/lib/")({"files": files})
