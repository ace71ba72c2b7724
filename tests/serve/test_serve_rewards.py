"""Rewards the way trainers get them, through a real server on 127.0.0.1 on the real engine: chat
answers (fenced, bare, with reasoning, with no code at all) through the TRL-shaped example, called
exactly as TRL's GRPOTrainer calls a reward function (sync and async), and the `extract` option
of /v1/check and /v1/batch."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.serve.server import Served, make_token, start
from verifier.bench import humaneval as he
from verifier.client import AsyncClient, Client, ServeError, reward
from verifier.evidence import Fault, Status
from verifier.serve.api import BatchItem, ExtractOptions

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("serve-rewards")]

PROBLEMS = he.load_problems()
TASKS = ["HumanEval/0", "HumanEval/2", "HumanEval/12"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-rewards")
    humaneval = folder / "humaneval"
    he.write_suites(humaneval, {t: PROBLEMS[t] for t in TASKS})
    tokens = {"trainer": (make_token(), {"suites": ["humaneval/*"], "concurrency": 8, "rate_per_s": 1000.0})}
    config = f'policy = "reuse"\n[pool]\nsize = 2\n[suite_roots]\nhumaneval = "{humaneval}"\n'
    server = start(
        folder, config, tokens, env={"VERIFIER_SLOTS_DIR": str(folder / "slots"), "VERIFIER_MAX_SANDBOXES": "2"}
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("grpo_reward", ROOT / "examples" / "serve" / "grpo_reward.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def whole(task: str) -> str:
    """The task's prompt and canonical solution: a whole, correct module."""
    return PROBLEMS[task].prompt + PROBLEMS[task].line["canonical_solution"]


def wrong(task: str) -> str:
    entry = PROBLEMS[task].line["entry_point"]
    return f"def {entry}(*args):\n    return None\n"


#: (description, task, completion text, expected reward): what models write.
CHAT: list[tuple[str, str, str, float]] = [
    (
        "fenced, prose around",
        "HumanEval/0",
        f"Sure! Here is the function:\n\n```python\n{whole('HumanEval/0')}\n```\n\nIt compares every pair.",
        1.0,
    ),
    ("bare continuation", "HumanEval/2", PROBLEMS["HumanEval/2"].line["canonical_solution"], 1.0),
    (
        "reasoning, two blocks, a test print",
        "HumanEval/12",
        "<think>\nFirst try:\n```python\ndef longest(strings):\n    return strings[0]\n```\n"
        "No: empty lists.\n</think>\n"
        f"Final answer:\r\n```py\r\n{whole('HumanEval/12')}\r\nprint(longest(['a', 'bb']))\r\n```\r\n",
        1.0,
    ),
    (
        "fenced without the prompt's imports",
        "HumanEval/0",
        "```python\n" + whole("HumanEval/0").split("\n", 2)[2] + "\n```",
        1.0,
    ),
    ("fenced, wrong", "HumanEval/2", f"Easy:\n```python\n{wrong('HumanEval/2')}```\nDone!", 0.0),
    ("bare, wrong", "HumanEval/12", "    return None\n", 0.0),
    ("no code at all", "HumanEval/0", "I am not able to solve this problem, sorry.", 0.0),
    ("reasoning never closed", "HumanEval/2", "<think>\nLet me think about ```python\nx = 1\n```", 0.0),
]


def trl_call(example: ModuleType, name: str, prompts: list[Any], completions: list[Any], **columns: Any) -> Any:
    """A reward function called as GRPOTrainer._calculate_rewards calls it."""
    return getattr(example, name)(
        prompts=prompts,
        completions=completions,
        completion_ids=[[0]] * len(completions),
        **columns,
        trainer_state=object(),
        log_extra=lambda *a, **k: None,
        log_metric=lambda *a, **k: None,
    )


def test_chat_answers_get_their_rewards_through_the_trl_shaped_example(served: Served, example: ModuleType) -> None:
    tasks = [task for _, task, _, _ in CHAT]
    columns = {"task_id": tasks, "entry_point": [PROBLEMS[t].line["entry_point"] for t in tasks]}
    with Client(served.url, served.tokens["trainer"]) as client:
        got = trl_call(
            example,
            "humaneval_reward",
            [PROBLEMS[t].prompt for t in tasks],
            [c for _, _, c, _ in CHAT],
            **columns,
            client=client,
        )
    assert dict(zip([d for d, *_ in CHAT], got, strict=True)) == {d: r for d, _, _, r in CHAT}


def test_conversational_completions_and_the_async_function(served: Served, example: ModuleType) -> None:
    tasks = [task for _, task, _, _ in CHAT]
    prompts = [[{"role": "user", "content": f"Complete this function:\n{PROBLEMS[t].prompt}"}] for t in tasks]
    completions = [[{"role": "assistant", "content": text}] for _, _, text, _ in CHAT]
    completions[0] = [{"role": "assistant", "content": [{"type": "text", "text": CHAT[0][2]}]}]  # content as parts
    columns = {"task_id": tasks, "code_prompt": [PROBLEMS[t].prompt for t in tasks]}

    async def step() -> list[float | None]:
        async with AsyncClient(served.url, served.tokens["trainer"]) as client:
            result: list[float | None] = await trl_call(
                example, "humaneval_reward_async", prompts, completions, **columns, client=client
            )
            return result

    assert asyncio.run(step()) == [r for *_, r in CHAT]


def test_an_answer_with_no_code_is_invalid_input_saying_so(served: Served) -> None:
    with Client(served.url, served.tokens["trainer"]) as client:
        ev = client.check("Here is my reasoning, but I ran out of time.", "humaneval/HumanEval/0", extract=True)
        assert ev.status is Status.INVALID_INPUT and ev.fault is Fault.INPUT and not ev.ok
        assert "has no Python code" in ev.reason
        assert reward(ev) == 0.0
        kept = client.evidence(ev.evidence_id)  # kept like any evidence
        assert kept.reason == ev.reason
        raw = client.check(f"```python\n{whole('HumanEval/0')}\n```", "humaneval/HumanEval/0")  # no extract
        assert raw.status is Status.ERROR  # a fence is a syntax error: the option is what takes it out
        with pytest.raises(ServeError) as refused:
            client.check({"a.py": "x = 1"}, "humaneval/HumanEval/0", extract=True)
        assert refused.value.status == 422 and "one text" in refused.value.reason
        lines = {
            line.id: line.evidence
            for line in client.batch(
                [
                    BatchItem(id="none", candidate="no idea", suite="humaneval/HumanEval/2", extract=ExtractOptions()),
                    BatchItem(
                        id="ok",
                        candidate=f"```python\n{whole('HumanEval/2')}\n```",
                        suite="humaneval/HumanEval/2",
                        extract=ExtractOptions(entry_point="truncate_number"),
                    ),
                ]
            )
        }
    assert lines["none"].status is Status.INVALID_INPUT and lines["ok"].ok
