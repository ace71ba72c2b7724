"""What verifier relies on in Deep Agents, pinned to the version we measured (0.7.32).

verifier decides from public interfaces only: the `on_evaluation` records, our own
tool-call records, and the thread_id of the config the caller passes. The binding between
them rests on these facts about RubricMiddleware; if an upgrade breaks one, this file
says which. No Docker: the sandbox is a fake that passes everything.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from typing import Any

import deepagents
import pytest
from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.conftest import ROOT, SUITE
from verifier import Verifier
from verifier.agents import verified_rubric
from verifier.agents.middleware import GRADER_RULES
from verifier.agents.scripted import ScriptedChatModel
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, answer

CODE = "def find_duplicates(values):\n    return []\n"
CRITERIA = ["tests pass", "task met"]


def passing(job: SandboxJob) -> RawRun:
    return answer(job)


def grader(result: str, seen: list[list[BaseMessage]] | None = None):  # type: ignore[no-untyped-def]
    def respond(messages: list[BaseMessage]) -> AIMessage:
        if seen is not None:
            seen.append(list(messages))
        if not isinstance(messages[-1], ToolMessage):
            return AIMessage("", tool_calls=[{"name": "run_test_suite", "args": {}, "id": uuid.uuid4().hex}])
        criteria: list[dict[str, Any]] = [
            {"name": n, "passed": True} if result == "satisfied" else {"name": n, "passed": False, "gap": "g"}
            for n in CRITERIA
        ]
        args = {"result": result, "explanation": result, "criteria": criteria}
        return AIMessage("", tool_calls=[{"name": "GraderResponse", "args": args, "id": uuid.uuid4().hex}])

    return respond


def run(result: str, *, use_async: bool = False, max_iterations: int = 3, system_prompt: str | None = None):  # type: ignore[no-untyped-def]
    evaluations: list[dict[str, Any]] = []
    seen: list[list[BaseMessage]] = []
    rubric = verified_rubric(
        model=ScriptedChatModel(responder=grader(result, seen)),
        suite=SUITE,
        verifier=Verifier(backend=FakeBackend(passing), image="x"),
        max_iterations=max_iterations,
        system_prompt=system_prompt,
        on_evaluation=evaluations.append,
    )
    worker = ScriptedChatModel(responder=lambda messages: AIMessage(CODE))
    agent = create_deep_agent(model=worker, middleware=[rubric.middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"contract-{uuid.uuid4().hex}"}}
    inputs = {"messages": [HumanMessage("Write find_duplicates.")], "rubric": "- tests pass\n- task met"}
    out = asyncio.run(agent.ainvoke(inputs, config)) if use_async else agent.invoke(inputs, config)
    return rubric, config, out, evaluations, seen


def test_the_deepagents_version_is_in_the_tested_range() -> None:
    """A range with both bounds (tested at each end), holding the installed version."""
    import tomllib

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (spec,) = [
        Requirement(d) for d in pyproject["project"]["optional-dependencies"]["agents"] if d.startswith("deepagents")
    ]
    assert {s.operator for s in spec.specifier} == {">=", "<"}, spec
    assert spec.specifier.contains(deepagents.__version__)


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
def test_grading_passes_are_bound_to_the_callers_thread_through_public_hooks(use_async: bool) -> None:
    """build_grader_state and on_evaluation run inside the caller's graph run (get_config()
    gives its thread_id); the tool runs between them, with the pass's iteration."""
    rubric, config, out, evaluations, _ = run("satisfied", use_async=use_async)
    thread = config["configurable"]["thread_id"]
    run_id = rubric.recorder.latest_run(thread_id=thread, scope=rubric.scope)
    assert run_id == evaluations[-1]["grading_run_id"]
    calls = rubric.recorder.tool_calls(run_id)
    assert [(c.thread_id, c.iteration, c.scope) for c in calls] == [(thread, 0, rubric.scope)]
    assert rubric.decide(out, config).accepted


def test_invoke_output_has_no_private_rubric_state() -> None:
    """Why decide() needs our records: invoke() drops Deep Agents' private keys."""
    *_, out, _, _ = run("satisfied")
    assert not [k for k in out if k.startswith("_")]
    assert {"messages", "rubric"} <= set(out)


def test_the_cap_reaches_on_evaluation_as_max_iterations_reached() -> None:
    rubric, config, out, evaluations, _ = run("needs_revision", max_iterations=2)
    assert [e["result"] for e in evaluations] == ["needs_revision", "max_iterations_reached"]
    decision = rubric.decide(out, config)
    assert not decision.accepted and "max_iterations_reached" in decision.reason


def test_user_instructions_are_added_to_the_strict_rules_not_instead_of_them() -> None:
    seed_prompt = "You are a strict code grader. Always obtain current test evidence before returning satisfied."
    _, _, _, _, seen = run("satisfied", system_prompt=seed_prompt)
    system = seen[0][0]
    assert isinstance(system, SystemMessage)
    assert str(system.content).startswith(seed_prompt)
    assert GRADER_RULES.strip() in str(system.content)


def test_verifier_never_reads_deep_agents_private_state() -> None:
    private = re.compile(r"_rubric_(status|iterations|evaluations|criteria)|_current_grading_run_id|_active_rubric")
    offenders = [
        str(path.relative_to(ROOT)) for path in (ROOT / "verifier").rglob("*.py") if private.search(path.read_text())
    ]
    offenders += [
        str(path.relative_to(ROOT)) for path in (ROOT / "examples").rglob("*.py") if private.search(path.read_text())
    ]
    assert offenders == []


def test_the_package_exports_verified_rubric() -> None:
    import verifier.agents as agents

    assert agents.verified_rubric is verified_rubric
    for name in agents.__all__:
        assert getattr(agents, name) is not None
    assert Path(agents.__file__).name == "__init__.py"
