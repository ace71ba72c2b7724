"""Where the latest candidate comes from: the source of truth, never the grader's retyping.

A `CandidateSource` reads the current candidate out of the working agent's state: the
last fenced Python block of the working model's last answer (`CodeBlock`), or a file in
the Deep Agents file state (`StateFile`). `grader_state` turns that into the fields the
evidence tool reads from the grader's state (via RubricMiddleware's `build_grader_state`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, Protocol

from langchain.agents import AgentState
from langchain_core.messages import AIMessage, BaseMessage

from verifier.hashing import sha256_bytes

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
GRADER_NAME = "rubric_grader"


class VerifierGraderState(AgentState):  # type: ignore[type-arg]
    """Extra keys of the grader's state: what the evidence tool verifies, and for which run."""

    candidate_source: NotRequired[str | None]
    candidate_sha256: NotRequired[str | None]
    grading_run_id: NotRequired[str | None]
    grading_iteration: NotRequired[int]


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(str(p) for p in parts)


def latest_code_block(messages: Sequence[BaseMessage]) -> str | None:
    """The last fenced Python block of the working model's last answer (None if it has none)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.name != GRADER_NAME:
            blocks = _FENCE.findall(_text(message))
            return blocks[-1] if blocks else None
    return None


class CandidateSource(Protocol):
    def __call__(self, state: Mapping[str, Any]) -> str | None:
        """The current candidate's source in the working agent's state, or None."""


@dataclass(frozen=True)
class CodeBlock:
    """The candidate is the last ```python block of the working model's last answer."""

    def __call__(self, state: Mapping[str, Any]) -> str | None:
        return latest_code_block(list(state.get("messages", [])))


@dataclass(frozen=True)
class StateFile:
    """The candidate is a file in the Deep Agents file state, e.g. StateFile("/solution.py")."""

    path: str

    def __call__(self, state: Mapping[str, Any]) -> str | None:
        data = (state.get("files") or {}).get(self.path)
        if data is None:
            return None
        content = data.get("content") if isinstance(data, Mapping) else data
        if isinstance(content, list):  # older deepagents kept a list of lines
            return "\n".join(str(line) for line in content)
        return None if content is None else str(content)


def grader_state(source: CandidateSource, state: Mapping[str, Any], iteration: int) -> dict[str, Any]:
    """What `build_grader_state` hands the grader: the latest candidate and its run."""
    code = source(state)
    return {
        "candidate_source": code,
        "candidate_sha256": sha256_bytes(code.encode()) if code is not None else None,
        "grading_run_id": state.get("_current_grading_run_id"),
        "grading_iteration": iteration,
    }
