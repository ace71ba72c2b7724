"""Evidence tools and a fail-closed gate for LLM graders (extra: `pip install 'sandboxed-verifier[agents]'`).

The core package never imports this one. Typical use with Deep Agents::

    rubric = verified_rubric(model=grader_model, suite="examples/find_duplicates/suite")
    agent = create_deep_agent(model=working_model, middleware=[rubric.middleware], checkpointer=InMemorySaver())
    result = agent.invoke({"messages": [...], "rubric": RUBRIC}, config)
    decision = rubric.decide(result, config)   # accepted only with current, passing evidence

Names are imported on first use, so `verifier runs report` does not load Deep Agents.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from verifier._distribution import install_hint
from verifier.errors import UnknownSandbox

_REQUIRED = ("deepagents", "langchain", "langgraph", "sqlalchemy")
_missing = [name for name in _REQUIRED if importlib.util.find_spec(name) is None]
if _missing:  # say which extra, not just which module
    raise ModuleNotFoundError(
        f"verifier.agents needs the agents extra ({', '.join(_missing)} not installed): {install_hint('agents')}",
        name=_missing[0],
    )

_EXPORTS = {
    "CandidateSource": "candidates",
    "CodeBlock": "candidates",
    "NoCandidate": "candidates",
    "StateFile": "candidates",
    "latest_code_block": "candidates",
    "AgentSandboxLimits": "sandbox.limits",
    "DockerSandbox": "sandbox.box",
    "ThreadSandboxes": "sandbox.threads",
    "SandboxFile": "sandbox.candidate",
    "SandboxFiles": "sandbox.candidate",
    "Decision": "gate",
    "decide": "gate",
    "GRADER_RULES": "middleware",
    "VerifiedRubric": "middleware",
    "verified_rubric": "middleware",
    "RunRecorder": "recorder",
    "RunsReport": "recorder",
    "ToolCall": "recorder",
    "default_url": "recorder",
    "EvidenceTool": "tools",
    "make_run_test_suite": "tools",
    "SeedError": "sandbox.seed",
    "NoDatabase": "recorder",
}
__all__ = [
    "GRADER_RULES",
    "AgentSandboxLimits",
    "CandidateSource",
    "CodeBlock",
    "Decision",
    "DockerSandbox",
    "EvidenceTool",
    "NoCandidate",
    "NoDatabase",
    "RunRecorder",
    "RunsReport",
    "SandboxFile",
    "SandboxFiles",
    "SeedError",
    "StateFile",
    "ThreadSandboxes",
    "ToolCall",
    "UnknownSandbox",
    "VerifiedRubric",
    "decide",
    "default_url",
    "latest_code_block",
    "make_run_test_suite",
    "verified_rubric",
]

if TYPE_CHECKING:
    from verifier.agents.candidates import CandidateSource, CodeBlock, NoCandidate, StateFile, latest_code_block
    from verifier.agents.gate import Decision, decide
    from verifier.agents.middleware import GRADER_RULES, VerifiedRubric, verified_rubric
    from verifier.agents.recorder import NoDatabase, RunRecorder, RunsReport, ToolCall, default_url
    from verifier.agents.sandbox.box import DockerSandbox
    from verifier.agents.sandbox.candidate import SandboxFile, SandboxFiles
    from verifier.agents.sandbox.limits import AgentSandboxLimits
    from verifier.agents.sandbox.seed import SeedError
    from verifier.agents.sandbox.threads import ThreadSandboxes
    from verifier.agents.tools import EvidenceTool, make_run_test_suite


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'verifier.agents' has no attribute {name!r}")
    return getattr(importlib.import_module(f"verifier.agents.{module}"), name)
