"""Scripted chat models: real LangChain chat models whose replies come from a Python
function. They drive the real deepagents/langgraph code where no API key exists (offline
example, tests). Kept on ToolStrategy: no `profile`, no provider-like model name.

`revising_worker` and `evidence_grader` script the two roles of a rubric run: a worker
that revises after each grader request, and a grader that only repeats what the evidence
tool reported."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

Responder = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Responder
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "verifier-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=self.responder(list(messages)))])


def revising_worker(*answers: str) -> Responder:
    """A working model that gives `answers[i]` after i revision requests from the grader (the last one after that)."""
    if not answers:
        raise ValueError("revising_worker needs at least one answer")

    def respond(messages: list[BaseMessage]) -> AIMessage:
        revisions = sum(1 for m in messages if isinstance(m, HumanMessage) and m.name == "rubric_grader")
        return AIMessage(content=answers[min(revisions, len(answers) - 1)])

    return respond


def evidence_grader(criteria: Sequence[str], tool: str = "run_test_suite") -> Responder:
    """A grader that calls the evidence tool, then says `satisfied` exactly when it reported
    `ok: true` and `latest candidate: yes` (every criterion passes or fails together, with the
    first failure and its falsifying input as the gap). Always the same criterion count, as
    RubricMiddleware's coverage check wants."""
    names = list(criteria)

    def respond(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            return AIMessage(content="", tool_calls=[{"name": tool, "args": {}, "id": f"call-{uuid.uuid4().hex[:8]}"}])
        lines = str(last.content).splitlines() or [""]
        summary = next((ln for ln in lines if ln.startswith("tests: ")), lines[0])
        if "ok: true" in lines[0] and "latest candidate: yes" in lines:
            verdict: dict[str, Any] = {
                "result": "satisfied",
                "explanation": f"{tool}: {summary}",
                "criteria": [{"name": n, "passed": True} for n in names],
            }
        else:
            first = next((ln[3:] for ln in lines if ln.startswith("1. ")), next(ln for ln in lines if ln))
            example = next((ln.strip() for ln in lines if ln.strip().startswith("falsifying input:")), "")
            gap = f"{first}; {example}" if example else first
            verdict = {
                "result": "needs_revision",
                "explanation": f"{tool}: {summary}",
                "criteria": [{"name": n, "passed": False, "gap": gap} for n in names],
            }
        call = {"name": "GraderResponse", "args": verdict, "id": f"verdict-{uuid.uuid4().hex[:8]}"}
        return AIMessage(content="", tool_calls=[call])

    return respond
