"""The prebuilt LangGraph loop (no Deep Agents), real sandbox, scripted worker."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.conftest import EXAMPLE, SUITE
from verifier import Verifier
from verifier.agents.graph import build_verify_loop, decide_loop
from verifier.agents.recorder import RunRecorder
from verifier.agents.scripted import ScriptedChatModel
from verifier.agents.tools import make_run_test_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def worker(*answers: Path) -> ScriptedChatModel:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        feedback = sum(1 for m in messages if isinstance(m, HumanMessage) and m.name == "verifier")
        return AIMessage(content=f"```python\n{answers[min(feedback, len(answers) - 1)].read_text()}```")

    return ScriptedChatModel(responder=respond)


def run(verifier: Verifier, *answers: Path, max_iterations: int = 3) -> tuple[object, dict[str, object], RunRecorder]:
    recorder = RunRecorder("sqlite://")
    evidence = make_run_test_suite(SUITE, verifier=verifier, recorder=recorder)
    graph = build_verify_loop(worker(*answers), evidence, checkpointer=InMemorySaver(), max_iterations=max_iterations)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    graph.invoke({"messages": [HumanMessage("Write find_duplicates.")]}, config)
    state = graph.get_state(config).values
    return decide_loop(state, evidence), state, recorder


def test_loop_revises_until_the_evidence_passes(verifier: Verifier) -> None:
    decision, state, recorder = run(verifier, EXAMPLE / "buggy_set.py", EXAMPLE / "good.py")
    assert [e["result"] for e in state["evaluations"]] == ["needs_revision", "satisfied"]  # type: ignore[index]
    assert decision.accepted  # type: ignore[attr-defined]
    assert recorder.report().final_pass_rate == 1.0


def test_loop_stops_at_the_cap_and_is_rejected(verifier: Verifier) -> None:
    decision, state, _ = run(verifier, EXAMPLE / "buggy_set.py", max_iterations=2)
    assert [e["result"] for e in state["evaluations"]] == ["needs_revision", "max_iterations_reached"]  # type: ignore[index]
    assert not decision.accepted  # type: ignore[attr-defined]
