"""A prebuilt LangGraph loop without Deep Agents: generate → verify → (revise → generate)* → stop.

The verify step calls the same evidence tool on the latest code block (no grading model:
the evidence *is* the verdict), records each round as a RubricEvaluation-shaped record, and
the same gate decides. Needs a checkpointer and a `thread_id`, like any LangGraph graph.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph

from verifier.agents.candidates import CodeBlock, read_candidate, read_latest
from verifier.agents.gate import Decision, decide
from verifier.agents.recorder import RunRecorder
from verifier.agents.tools import EvidenceTool, render

CRITERION = "run_test_suite reports ok: true for the latest candidate"


class LoopState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    grading_run_id: str
    iteration: int
    status: str
    evaluations: Annotated[list[dict[str, Any]], operator.add]


def build_verify_loop(
    model: BaseChatModel,
    evidence: EvidenceTool,
    *,
    checkpointer: BaseCheckpointSaver[Any],
    max_iterations: int = 3,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the loop. Invoke with {"messages": [task]} and a config carrying a thread_id."""
    if max_iterations < 1:
        raise ValueError("max_iterations must be at least 1")
    recorder: RunRecorder | None = evidence.recorder

    def generate(state: LoopState) -> dict[str, Any]:
        update: dict[str, Any] = {"messages": [model.invoke(state["messages"])]}
        if not state.get("grading_run_id") or state.get("status") in ("satisfied", "max_iterations_reached"):
            update.update(grading_run_id=str(uuid.uuid4()), iteration=0, status="running")
        return update

    def verify(state: LoopState) -> dict[str, Any]:
        run_id, iteration = state["grading_run_id"], state.get("iteration", 0)
        latest = read_candidate(CodeBlock(), state)
        ev = evidence.verify(
            None,
            {
                "candidate_source": latest.code,
                "candidate_missing": latest.missing,
                "candidate_missing_untrusted": latest.missing_untrusted,
                "grading_run_id": run_id,
                "grading_iteration": iteration,
            },
        )
        if ev.ok:
            result, criterion = "satisfied", {"name": CRITERION, "passed": True}
        else:
            result = "needs_revision" if iteration + 1 < max_iterations else "max_iterations_reached"
            criterion = {"name": CRITERION, "passed": False, "gap": ev.reason}
        evaluation = {
            "grading_run_id": run_id,
            "iteration": iteration,
            "result": result,
            "explanation": f"run_test_suite: {ev.status.value}, {ev.reason}",
            "criteria": [criterion],
            "unverified": False,
        }
        if recorder is not None:
            recorder.on_evaluation(evaluation)
        update: dict[str, Any] = {"status": result, "iteration": iteration + 1, "evaluations": [evaluation]}
        if result == "needs_revision":
            update["messages"] = [
                HumanMessage(
                    content="The sandboxed tests did not pass for your latest code. Evidence:\n"
                    + render(ev)
                    + "\nFix every failure and reply with the whole module (bare source or one ```python block).",
                    name="verifier",
                )
            ]
        return update

    def route(state: LoopState) -> str:
        return "generate" if state.get("status") == "needs_revision" else END

    graph = StateGraph(LoopState)
    graph.add_node("generate", generate)
    graph.add_node("verify", verify)
    graph.add_edge(START, "generate")
    graph.add_edge("generate", "verify")
    graph.add_conditional_edges("verify", route, ["generate", END])
    return graph.compile(checkpointer=checkpointer)


def decide_loop(state: dict[str, Any], evidence: EvidenceTool) -> Decision:
    """The gate for a finished loop (pass `graph.get_state(config).values`)."""
    run_id = state.get("grading_run_id")
    evaluations = [e for e in state.get("evaluations", []) if e["grading_run_id"] == run_id]
    calls = evidence.recorder.tool_calls(str(run_id)) if evidence.recorder and run_id else []
    code, missing = read_latest(CodeBlock(), state)
    return decide(evaluations, calls, code, grading_run_id=run_id, no_candidate_reason=missing)
