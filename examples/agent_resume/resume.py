"""A LangGraph thread that resumes in a second process and reconnects to its sandbox.

A Deep Agents worker gets a lasting `DockerSandbox` for its thread (`ThreadSandboxes`, keyed
by the thread id) and a SQLite checkpointer. Process A runs the thread's first turn: the
worker writes /workspace/notes.md and runs a command on it, then process A exits. Process B
(a new Python process, as another server worker or a restart would be) resumes the same
thread: the checkpointer gives back the conversation, `ThreadSandboxes` reconnects to the same
sandbox by the thread id, and the worker finds the file it wrote in process A.

Needs the agents extra (pip install 'sandboxed-verifier[agents]') and a running Docker
engine; the sandbox image is built on first use (about a minute).

    python examples/agent_resume/resume.py                       # both turns, two processes
    python examples/agent_resume/resume.py start  --thread T --db threads.db
    python examples/agent_resume/resume.py resume --thread T --db threads.db
    python examples/agent_resume/resume.py delete --thread T     # remove the thread's sandbox

Offline, the worker is a scripted model (no API key); WORKING_MODEL=provider:model-id uses a
real one. Each step prints one JSON line last; without a step, the thread's sandbox is removed
at the end and the exit code is 0 only when process B found process A's sandbox and file.
A sandbox nobody uses ends after --idle seconds, and `verifier gc` removes it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

NOTES = "/workspace/notes.md"
FIRST = f"Write three ideas for a weekend project to {NOTES}, then count its lines."
SECOND = f"Which ideas did you write down earlier? Read {NOTES} again."
IDEAS = "- a bird feeder camera\n- a sourdough log\n- a bike light from old parts\n"
NAMESPACE = "agent-resume-example"


def scripted_worker(messages: list[BaseMessage]) -> AIMessage:
    """The working model, offline: its steps depend on the request it answers."""
    asks = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    request = messages[asks[-1]]
    done = [m for m in messages[asks[-1] :] if isinstance(m, ToolMessage)]
    if request.text.startswith("Write"):
        steps = [("write_file", {"file_path": NOTES, "content": IDEAS}), ("execute", {"command": f"wc -l < {NOTES}"})]
    else:
        steps = [("execute", {"command": f"cat {NOTES}"})]
    if len(done) < len(steps):
        name, args = steps[len(done)]
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"w-{uuid.uuid4().hex[:8]}"}])
    earlier = len(asks) - 1
    return AIMessage(content=f"({earlier} earlier request(s) in this thread) {done[-1].text.strip()}")


def model() -> Any:
    if "WORKING_MODEL" in os.environ:
        from langchain.chat_models import init_chat_model

        return init_chat_model(os.environ["WORKING_MODEL"])
    from verifier.agents.scripted import ScriptedChatModel

    return ScriptedChatModel(responder=scripted_worker)


def turn(step: str, thread: str, db: Path, idle_s: float) -> dict[str, Any]:
    """One turn of the thread in this process: the thread's sandbox (reconnected or new), the
    checkpointed conversation, one request; the sandbox is let go of, not removed."""
    from deepagents import create_deep_agent
    from langgraph.checkpoint.sqlite import SqliteSaver

    from verifier.agents import ThreadSandboxes
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    client = connect()
    image.build(client)  # a no-op when the image of this recipe exists
    client.close()
    config = {"configurable": {"thread_id": thread}}
    with ThreadSandboxes(idle_timeout_s=idle_s, namespace=NAMESPACE) as sandboxes:
        sandbox = sandboxes.for_config(config)
        with SqliteSaver.from_conn_string(str(db)) as saver:
            agent = create_deep_agent(model=model(), backend=sandbox, checkpointer=saver)
            request = FIRST if step == "start" else SECOND
            result = agent.invoke({"messages": [HumanMessage(request)]}, config)
        messages = result["messages"]
        return {
            "step": step,
            "pid": os.getpid(),
            "thread_id": thread,
            "sandbox": sandbox.id,
            "messages": len(messages),
            "requests": sum(1 for m in messages if isinstance(m, HumanMessage)),
            "answer": messages[-1].text,
        }


def delete(thread: str) -> dict[str, Any]:
    from verifier.agents import ThreadSandboxes

    with ThreadSandboxes(namespace=NAMESPACE) as sandboxes:
        return {"step": "delete", "thread_id": thread, "removed": sandboxes.delete(thread)}


def both(idle_s: float) -> dict[str, Any]:
    """Each turn in a process of its own, then the thread's sandbox removed."""
    thread = f"resume-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "threads.db"
        runs = []
        try:
            for step in ("start", "resume"):
                argv = [sys.executable, __file__, step, "--thread", thread, "--db", str(db), "--idle", str(idle_s)]
                done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise SystemExit(f"{step} failed:\n{done.stderr[-3000:]}")
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(f"process {runs[-1]['pid']} ({step}): sandbox {runs[-1]['sandbox']}")
                print(f"  worker: {runs[-1]['answer'][:200]!r}")
        finally:
            removed = delete(thread)["removed"]
    first, second = runs
    return {
        "thread_id": thread,
        "processes": [first["pid"], second["pid"]],
        "same_sandbox": first["sandbox"] == second["sandbox"],
        "found_notes": all(line in second["answer"] for line in IDEAS.splitlines()),
        "resumed_conversation": second["requests"] == 2,
        "sandbox_removed": removed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:2]), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("step", nargs="?", choices=["start", "resume", "delete"], help="one step (default: both turns)")
    parser.add_argument("--thread", help="the thread id (a step needs it)")
    parser.add_argument("--db", type=Path, help="the SQLite checkpoint file (start and resume need it)")
    parser.add_argument("--idle", type=float, default=600.0, help="the sandbox's idle timeout in seconds")
    args = parser.parse_args(argv)
    if args.step is None:
        outcome = both(args.idle)
        print(json.dumps(outcome))
        return 0 if outcome["same_sandbox"] and outcome["found_notes"] and outcome["resumed_conversation"] else 1
    if not args.thread:
        parser.error(f"{args.step} needs --thread")
    if args.step == "delete":
        print(json.dumps(delete(args.thread)))
        return 0
    if args.db is None:
        parser.error(f"{args.step} needs --db")
    print(json.dumps(turn(args.step, args.thread, args.db, args.idle)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
