"""Evidence tools and a fail-closed gate for LLM graders (extra: `pip install verifier[agents]`).

The core package never imports this one. Typical use with Deep Agents::

    rubric = verified_rubric(model=grader_model, suite="examples/find_duplicates/suite")
    agent = create_deep_agent(model=working_model, middleware=[rubric.middleware], checkpointer=InMemorySaver())
    agent.invoke({"messages": [...], "rubric": RUBRIC}, config)
    decision = rubric.decide(agent.get_state(config).values)   # accepted only with current evidence
"""

from verifier.agents.candidates import CandidateSource, CodeBlock, StateFile, latest_code_block
from verifier.agents.gate import Decision, decide
from verifier.agents.recorder import RunRecorder, RunsReport, ToolCall
from verifier.agents.tools import EvidenceTool, make_run_test_suite

__all__ = [
    "CandidateSource",
    "CodeBlock",
    "Decision",
    "EvidenceTool",
    "RunRecorder",
    "RunsReport",
    "StateFile",
    "ToolCall",
    "decide",
    "latest_code_block",
    "make_run_test_suite",
]
