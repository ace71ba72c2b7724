"""The tutorial's find_duplicates scenario, end to end, with the real sandbox.

A working model writes find_duplicates; a grading model (Deep Agents' RubricMiddleware)
calls the sandboxed `run_test_suite` evidence tool on the latest candidate, feeds the
failures back, and the fail-closed gate accepts only a `satisfied` verdict backed by
passing evidence for the final candidate's exact bytes.

    python examples/find_duplicates/rubric_loop.py              # offline: scripted models
    WORKING_MODEL=openai:gpt-5.1 GRADER_MODEL=openai:gpt-5.1-mini python ... --online

Offline, the worker's first answer is the set-based bug; the grader runs the tool, gets
the unhashable-value failure and asks for a revision; the worker fixes it; the grader
re-runs the tool on the new candidate and returns `satisfied`; the gate accepts.
The last line printed is one JSON object with the outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

HERE = Path(__file__).resolve().parent
SUITE = HERE / "suite"
TASK = """Implement find_duplicates(values). Return each duplicated value once,
ordered by where it appears for the second time. Support unhashable values,
do not mutate the input, and reply with the source in one ```python block."""
RUBRIC = """- Before returning satisfied, call run_test_suite for the latest candidate.
- The run_test_suite result must contain ok: true and latest candidate: yes.
- The function is named find_duplicates and accepts one list argument.
- Each duplicated value appears exactly once, ordered by its second occurrence.
- Unhashable values such as nested lists are supported, and the input is not mutated."""
CRITERIA = (
    "run_test_suite reports ok: true for the latest candidate",
    "find_duplicates meets the task (order, uniqueness, unhashable values, no mutation)",
)


def _block(path: Path) -> str:
    return "```python\n" + path.read_text() + "```"


def scripted_worker(messages: list[BaseMessage]) -> AIMessage:
    """First answer: the set-based bug. After a grader's revision request: the fix."""
    revisions = sum(1 for m in messages if isinstance(m, HumanMessage) and m.name == "rubric_grader")
    if revisions == 0:
        return AIMessage(content="Here is my implementation:\n" + _block(HERE / "buggy_set.py"))
    return AIMessage(content="Revised to compare with == so lists work:\n" + _block(HERE / "good.py"))


def scripted_grader(messages: list[BaseMessage]) -> AIMessage:
    """Calls the evidence tool, then bases its verdict on what the tool reported."""
    last = messages[-1]
    if not isinstance(last, ToolMessage):
        return AIMessage(
            content="", tool_calls=[{"name": "run_test_suite", "args": {}, "id": f"call-{uuid.uuid4().hex[:8]}"}]
        )
    report = str(last.content)
    passed = "ok: true" in report and "latest candidate: yes" in report
    if passed:
        verdict: dict[str, Any] = {
            "result": "satisfied",
            "explanation": "run_test_suite: " + report.splitlines()[1],
            "criteria": [{"name": name, "passed": True} for name in CRITERIA],
        }
    else:
        first_failure = next((ln for ln in report.splitlines() if ln.startswith("1. ")), report.splitlines()[0])
        gap = f"{first_failure[:300]} -- see the falsifying input in the tool output"
        verdict = {
            "result": "needs_revision",
            "explanation": "run_test_suite: " + report.splitlines()[1],
            "criteria": [{"name": name, "passed": False, "gap": gap} for name in CRITERIA],
        }
    return AIMessage(
        content="", tool_calls=[{"name": "GraderResponse", "args": verdict, "id": f"verdict-{uuid.uuid4().hex[:8]}"}]
    )


def models(online: bool) -> tuple[Any, Any]:
    if online:
        from langchain.chat_models import init_chat_model

        working = init_chat_model(os.environ["WORKING_MODEL"])
        return working, init_chat_model(os.environ.get("GRADER_MODEL", os.environ["WORKING_MODEL"]))
    from verifier.agents.scripted import ScriptedChatModel

    return ScriptedChatModel(responder=scripted_worker), ScriptedChatModel(responder=scripted_grader)


def run(online: bool = False, recorder_url: str = "sqlite://") -> dict[str, Any]:
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from verifier.agents.middleware import verified_rubric
    from verifier.agents.progress import GradingProgress
    from verifier.agents.recorder import RunRecorder

    working, grader = models(online)
    rubric = verified_rubric(model=grader, suite=SUITE, max_iterations=3, recorder=RunRecorder(recorder_url))
    agent = create_deep_agent(model=working, middleware=[rubric.middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"find-duplicates-{uuid.uuid4().hex[:8]}"}}
    progress = GradingProgress()
    progress.follow(
        agent.stream({"messages": [HumanMessage(TASK)], "rubric": RUBRIC}, config, stream_mode=["custom", "values"])
    )
    state = agent.get_state(config).values
    decision = rubric.decide(state)
    run_id = decision.grading_run_id
    verdicts = [e["result"] for e in state.get("_rubric_evaluations", []) if e["grading_run_id"] == run_id]
    return {
        "accepted": decision.accepted,
        "reason": decision.reason,
        "verdicts": verdicts,
        "candidate_sha256": decision.candidate_sha256,
        "evidence_id": decision.evidence_id,
        "grading_run_id": run_id,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="scripted models (the default without WORKING_MODEL)")
    mode.add_argument("--online", action="store_true", help="real models from WORKING_MODEL / GRADER_MODEL")
    parser.add_argument("--recorder", default="sqlite://", help="SQLAlchemy URL of the run recorder")
    args = parser.parse_args(argv)
    online = args.online or (not args.offline and "WORKING_MODEL" in os.environ)
    if online and "WORKING_MODEL" not in os.environ:
        parser.error("--online needs WORKING_MODEL (provider:model-id)")
    outcome = run(online=online, recorder_url=args.recorder)
    print(json.dumps(outcome))
    return 0 if outcome["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
