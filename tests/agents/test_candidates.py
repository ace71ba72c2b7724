from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from verifier.agents.candidates import CodeBlock, StateFile, grader_state, latest_code_block
from verifier.hashing import sha256_bytes


def test_latest_code_block_is_the_working_models_last_answer() -> None:
    messages = [
        HumanMessage("task"),
        AIMessage("v1\n```python\ndef f(): return 1\n```"),
        HumanMessage("revise", name="rubric_grader"),
        AIMessage("v2\n```python\ndef f(): return 0\n```\nand\n```python\ndef f(): return 2\n```"),
    ]
    assert latest_code_block(messages) == "def f(): return 2\n"
    assert latest_code_block([*messages, AIMessage("no code this time")]) is None


def test_state_file_reads_the_deep_agents_file_state() -> None:
    state = {"files": {"/solution.py": {"content": "def f():\n    return 3\n", "encoding": "utf-8"}}}
    assert StateFile("/solution.py")(state) == "def f():\n    return 3\n"
    assert StateFile("/other.py")(state) is None
    assert StateFile("/old.py")({"files": {"/old.py": {"content": ["a = 1", "b = 2"]}}}) == "a = 1\nb = 2"


def test_grader_state_binds_candidate_and_run() -> None:
    state = {"messages": [AIMessage("```python\nx = 1\n```")], "_current_grading_run_id": "run-7"}
    bound = grader_state(CodeBlock(), state, 2)
    assert bound == {
        "candidate_source": "x = 1\n",
        "candidate_sha256": sha256_bytes(b"x = 1\n"),
        "grading_run_id": "run-7",
        "grading_iteration": 2,
    }
