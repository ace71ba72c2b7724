"""find_duplicates, with a working agent that has its own sandbox.

The working agent (Deep Agents) works in a `DockerSandbox`: a hardened, network-less
container of its own. It writes /workspace/solution.py with the file tools and runs its own
quick check with `execute`. The grader's `run_test_suite` tool reads the file from the
agent's disk at grading time (`SandboxFile`) and verifies those bytes in a fresh verifier
container; the fail-closed gate accepts only with passing evidence for the bytes on disk.

Needs the agents extra (pip install 'sandboxed-verifier[agents]') and a running Docker
engine; the sandbox image is built on first use (about a minute).

    python examples/find_duplicates/agent_with_sandbox.py            # offline: scripted models
    python examples/find_duplicates/agent_with_sandbox.py --stale    # + an edit after grading
    WORKING_MODEL=openai:gpt-5.1 GRADER_MODEL=openai:gpt-5.1-mini python ... --online

Offline, both models are scripted: the worker writes the set-based bug (buggy_set.py),
checks it on integers, is sent back with the failing unhashable input, fixes the file
with edit_file and checks again; the grader calls the tool and repeats what it reported.
With --stale the user then asks for a docstring, without a rubric: the worker edits the
file after the last grading, and the gate rejects the run (stale evidence). The last line
printed is one JSON object with the outcome; the exit code is 0 only when accepted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

HERE = Path(__file__).resolve().parent
SUITE = HERE / "suite"
SOLUTION = "/workspace/solution.py"
TASK = f"""Implement find_duplicates(values) in {SOLUTION}. Return each duplicated value
once, ordered by where it appears for the second time. Support unhashable values and do
not mutate the input. Use your sandbox to check your code before you answer."""
FOLLOW_UP = f"Add a one-line docstring to find_duplicates in {SOLUTION}."
RUBRIC = """- Before returning satisfied, call run_test_suite for the latest candidate.
- The run_test_suite result must contain ok: true and latest candidate: yes.
- find_duplicates returns each duplicated value once, ordered by its second occurrence.
- Unhashable values such as nested lists are supported, and the input is not mutated."""
CRITERIA = (
    "run_test_suite reports ok: true for the latest candidate",
    "find_duplicates meets the task (order, uniqueness, unhashable values, no mutation)",
)
QUICK_CHECK = "cd /workspace && python3 -c 'from solution import find_duplicates as f; print(f({}))'"
SET_BODY = """    seen = set()
    duplicates = []
    for value in values:
        if value in seen and value not in duplicates:
            duplicates.append(value)
        seen.add(value)
"""
LIST_BODY = """    seen = []
    duplicates = []
    for value in values:
        if value in seen:
            if value not in duplicates:
                duplicates.append(value)
        else:
            seen.append(value)
"""
SIGNATURE = "def find_duplicates(values):\n"
DOCSTRING = '    """Each repeated value once, in order of its second occurrence."""\n'


def scripted_worker(messages: list[BaseMessage]) -> AIMessage:
    """The working model, offline: what it does depends on the request it is answering
    (the task, a grader's revision request, or the follow-up) and on how far it got."""
    asks = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    request = messages[asks[-1]]
    done = sum(1 for m in messages[asks[-1] :] if isinstance(m, ToolMessage))
    if request.text.startswith("Add a one-line docstring"):
        steps = [("edit_file", {"file_path": SOLUTION, "old_string": SIGNATURE, "new_string": SIGNATURE + DOCSTRING})]
        closing = "Added the docstring."
    elif request.name == "rubric_grader":
        steps = [
            ("edit_file", {"file_path": SOLUTION, "old_string": SET_BODY, "new_string": LIST_BODY}),
            ("execute", {"command": QUICK_CHECK.format("[[1], [2], [1]]")}),
        ]
        closing = f"Fixed {SOLUTION}: values are compared with ==, so lists work; checked [[1], [2], [1]]."
    else:
        source = (HERE / "buggy_set.py").read_text()
        steps = [
            ("write_file", {"file_path": SOLUTION, "content": source}),
            ("execute", {"command": QUICK_CHECK.format("[1, 2, 1, 3, 2]")}),
        ]
        closing = f"Wrote {SOLUTION} and checked it on [1, 2, 1, 3, 2]."
    if done < len(steps):
        name, args = steps[done]
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"w-{uuid.uuid4().hex[:8]}"}])
    return AIMessage(content=closing)


def models(online: bool) -> tuple[Any, Any]:
    if online:
        from langchain.chat_models import init_chat_model

        working = init_chat_model(os.environ["WORKING_MODEL"])
        return working, init_chat_model(os.environ.get("GRADER_MODEL", os.environ["WORKING_MODEL"]))
    from verifier.agents.scripted import ScriptedChatModel, evidence_grader

    return ScriptedChatModel(responder=scripted_worker), ScriptedChatModel(responder=evidence_grader(CRITERIA))


def tell(result: dict[str, Any], rubric: Any, outcome: dict[str, Any]) -> None:
    """The run for a reader, in 80 columns: each request, the worker's tool calls and answer,
    the grading pass that followed, then the decision."""
    from verifier.text import one_line

    def say(text: str, indent: int = 2) -> None:
        print((" " * indent + one_line(text, 400))[:80])

    print(f"find_duplicates, the worker in its own sandbox: {outcome['sandbox']}")
    print(f"models: {outcome['models']}; the suite runs in a fresh verifier container")
    run_id = outcome["grading_run_id"]
    passes = list(rubric.recorder.evaluations(run_id)) if run_id else []
    calls = list(rubric.recorder.tool_calls(run_id)) if run_id else []
    replies = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    for message in result["messages"]:
        if isinstance(message, HumanMessage) and message.name == "rubric_grader":
            gaps = [ln for ln in message.text.splitlines() if ln.startswith("- ")]
            print("the middleware sends the worker back:")
            say(gaps[0] if gaps else message.text)
        elif isinstance(message, HumanMessage):
            print("user:")
            say(message.text.splitlines()[0])
        elif isinstance(message, AIMessage):
            for call in message.tool_calls:
                say(f"worker -> {call['name']} {call['args'].get('command') or call['args'].get('file_path', '')}")
                reply = replies.get(call["id"])
                lines = reply.text.strip().splitlines() if reply is not None else []
                say(lines[0] if lines else "(no output)", 8)
            if message.text and not message.tool_calls:
                say(f"worker: {message.text}")
                if passes:  # the worker stopped: the grading pass of this answer
                    evaluation = passes.pop(0)
                    print(f"grading pass {evaluation['iteration']}: {evaluation['result']}")
                    for call in [c for c in calls if c.iteration == evaluation["iteration"]]:
                        say(f"run_test_suite: {'ok' if call.ok else call.status}: {call.reason}")
                        say(f"candidate {call.candidate_sha256}")
    print("decision:", "ACCEPTED" if outcome["accepted"] else "REJECTED")
    say(outcome["reason"])
    say(f"on disk   {outcome['disk_sha256']}")
    say(f"candidate {outcome['candidate_sha256'] or '-'}")


def run(
    online: bool = False, stale: bool = False, recorder_url: str | None = None, story: bool = True
) -> dict[str, Any]:
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from verifier.agents import DockerSandbox, SandboxFile, verified_rubric
    from verifier.agents.recorder import RunRecorder
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    client = connect()
    image.build(client)  # a no-op when the image of this recipe exists
    client.close()
    working, grader = models(online)
    with DockerSandbox() as sandbox:
        rubric = verified_rubric(
            model=grader,
            suite=SUITE,
            candidate=SandboxFile(sandbox, SOLUTION),
            max_iterations=3,
            recorder=RunRecorder(recorder_url),
        )
        agent = create_deep_agent(
            model=working, backend=sandbox, middleware=[rubric.middleware], checkpointer=InMemorySaver()
        )
        config = {"configurable": {"thread_id": f"find-duplicates-{uuid.uuid4().hex[:8]}"}}
        result = agent.invoke({"messages": [HumanMessage(TASK)], "rubric": RUBRIC}, config)
        if stale:  # a follow-up without a rubric: the file changes after the last grading
            result = agent.invoke({"messages": [HumanMessage(FOLLOW_UP)], "rubric": ""}, config)
        decision = rubric.decide(result, config)
        on_disk = sandbox.download_files([SOLUTION])[0].content or b""
        run_id = decision.grading_run_id
        outcome = {
            "accepted": decision.accepted,
            "reason": decision.reason,
            "verdicts": [e["result"] for e in rubric.recorder.evaluations(run_id)] if run_id else [],
            "candidate_sha256": decision.candidate_sha256,
            "disk_sha256": hashlib.sha256(on_disk).hexdigest(),
            "evidence_id": decision.evidence_id,
            "grading_run_id": run_id,
            "thread_id": config["configurable"]["thread_id"],
            "sandbox": sandbox.id,
            "models": "online" if online else "scripted",
            "stale": stale,
        }
        if story:
            tell(result, rubric, outcome)
        rubric.recorder.close()
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:3]), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="scripted models (the default without WORKING_MODEL)")
    mode.add_argument("--online", action="store_true", help="real models from WORKING_MODEL / GRADER_MODEL")
    parser.add_argument("--stale", action="store_true", help="then edit the file after the last grading")
    parser.add_argument("--recorder", default=None, help="SQLAlchemy URL of the run recorder")
    args = parser.parse_args(argv)
    online = args.online or (not args.offline and "WORKING_MODEL" in os.environ)
    if online and "WORKING_MODEL" not in os.environ:
        parser.error("--online needs WORKING_MODEL (provider:model-id)")
    outcome = run(online=online, stale=args.stale, recorder_url=args.recorder)
    print(json.dumps(outcome))
    return 0 if outcome["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
