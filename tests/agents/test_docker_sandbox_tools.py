"""Every file tool Deep Agents derives from BaseSandbox (ls, read_file, write_file, edit_file,
glob, grep, delete) and `execute`, called by a scripted model through the real
`create_deep_agent(backend=DockerSandbox)`, on the sync and the async path."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from verifier.agents.sandbox.box import DockerSandbox
from verifier.agents.scripted import ScriptedChatModel

pytestmark = pytest.mark.docker

SOURCE = "def add(a, b):\n    return a + b\n"
#: Over Deep Agents' 50 kB inline-edit limit: the edit goes through temp files in /tmp.
BIG_OLD, BIG_NEW = "# " + "o" * 30_000 + "\n", "# " + "n" * 30_000 + "\n"


@pytest.fixture
def box(sandbox_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(image=sandbox_image) as sandbox:
        yield sandbox


def scripted(calls: list[tuple[str, dict[str, Any]]]) -> ScriptedChatModel:
    """A model that makes `calls` one at a time, then says it is done."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        done = sum(1 for m in messages if isinstance(m, ToolMessage))
        if done < len(calls):
            name, args = calls[done]
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{done}"}])
        return AIMessage(content="done")

    return ScriptedChatModel(responder=respond)


def run(box: DockerSandbox, calls: list[tuple[str, dict[str, Any]]], use_async: bool) -> list[ToolMessage]:
    agent = create_deep_agent(model=scripted(calls), backend=box)
    inputs = {"messages": [HumanMessage("work in the sandbox")]}
    result = asyncio.run(agent.ainvoke(inputs)) if use_async else agent.invoke(inputs)
    replies = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    return [replies[f"call-{i}"] for i in range(len(calls))]


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
def test_each_file_tool_works_against_the_sandbox(box: DockerSandbox, use_async: bool) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"file_path": "/workspace/pkg/calc.py", "content": SOURCE}),
        ("read_file", {"file_path": "/workspace/pkg/calc.py"}),
        ("edit_file", {"file_path": "/workspace/pkg/calc.py", "old_string": "a + b", "new_string": "b + a"}),
        ("ls", {"path": "/workspace/pkg"}),
        ("glob", {"pattern": "**/*.py", "path": "/workspace"}),
        ("grep", {"pattern": "b + a", "path": "/workspace", "output_mode": "content"}),
        ("execute", {"command": "cd /workspace/pkg && python3 -c 'from calc import add; print(add(2, 3))'"}),
        ("write_file", {"file_path": "/workspace/big.py", "content": BIG_OLD}),
        ("edit_file", {"file_path": "/workspace/big.py", "old_string": BIG_OLD, "new_string": BIG_NEW}),
        ("delete", {"file_path": "/workspace/big.py"}),
        ("write_file", {"file_path": "/etc/outside.py", "content": "x = 1\n"}),
        ("read_file", {"file_path": "/workspace/missing.py"}),
    ]
    replies = run(box, calls, use_async)
    texts = [str(r.content) for r in replies]
    write, read, edit, ls, glob, grep, execute, big_write, big_edit, delete, outside, missing = texts
    assert "/workspace/pkg/calc.py" in write and replies[0].status != "error"
    assert "return a + b" in read
    assert "Successfully replaced 1 instance" in edit
    assert "/workspace/pkg/calc.py" in ls
    assert "/workspace/pkg/calc.py" in glob
    assert "/workspace/pkg/calc.py" in grep and "b + a" in grep
    assert "5" in execute and "exit code 0" in execute
    assert "/workspace/big.py" in big_write and "Successfully replaced 1 instance" in big_edit, big_edit
    assert delete == "Deleted /workspace/big.py"
    assert outside == "Failed to write file '/etc/outside.py': permission_denied"
    assert missing == "Error: File '/workspace/missing.py': file_not_found"
    assert box.download_files(["/workspace/pkg/calc.py"])[0].content == SOURCE.replace("a + b", "b + a").encode()
    assert box.download_files(["/workspace/big.py"])[0].error == "file_not_found"
    leftovers = box.execute("ls -A /tmp | grep -c deepagents_edit || true").output.strip()
    assert leftovers == "0"  # the large edit cleaned up its temp files


def test_the_execute_tool_reports_timeouts_and_truncation(sandbox_image: str) -> None:
    from verifier.agents.sandbox.limits import AgentSandboxLimits

    marker = uuid.uuid4().hex[:8]
    with DockerSandbox(image=sandbox_image, limits=AgentSandboxLimits(output_bytes=4096)) as box:
        replies = run(
            box,
            [
                ("execute", {"command": f"echo {marker}; sleep 60", "timeout": 1}),
                ("execute", {"command": "head -c 20000 /dev/zero | tr '\\0' z"}),
            ],
            use_async=False,
        )
    slow, flood = (str(r.content) for r in replies)
    assert marker in slow and "timed out after 1 s" in slow and "exit code 124" in slow
    assert "truncated" in flood and replies[1].artifact == {"truncated": True, "exit_code": 0}


def test_large_results_are_offloaded_only_under_a_writable_artifacts_root(box: DockerSandbox) -> None:
    """Deep Agents writes large tool results under its artifacts root ("/" by default, outside the
    sandbox's writable roots: refused, the result stays inline); with a CompositeBackend whose
    artifacts_root is in the workspace they are offloaded there (as docs/architecture.md says)."""
    from deepagents.backends import CompositeBackend

    call = [("execute", {"command": "head -c 300000 /dev/zero | tr '\\0' a"})]
    inline = run(box, call, use_async=False)[0]
    assert len(str(inline.content)) > 300_000
    composite = CompositeBackend(default=box, routes={}, artifacts_root="/workspace/.deepagents")
    agent = create_deep_agent(model=scripted(call), backend=composite)
    result = agent.invoke({"messages": [HumanMessage("work in the sandbox")]})
    [offloaded] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert "/workspace/.deepagents/large_tool_results/call-0" in str(offloaded.content)
    [saved] = box.download_files(["/workspace/.deepagents/large_tool_results/call-0"])
    assert saved.content is not None and saved.content.startswith(b"a" * 1000)
