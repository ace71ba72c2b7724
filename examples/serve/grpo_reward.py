"""Reward functions for TRL's `GRPOTrainer` that score code through `verifier serve`.

    from trl import GRPOConfig, GRPOTrainer
    from examples.serve.grpo_reward import humaneval_reward          # or humaneval_reward_async

    trainer = GRPOTrainer(model=..., reward_funcs=[humaneval_reward], train_dataset=dataset, args=GRPOConfig(...))

**What the trainer passes.** TRL calls a reward function as
`reward(prompts=..., completions=..., completion_ids=..., **columns)`: `prompts` and
`completions` one per generation, and every other dataset column as a keyword argument (a list,
one value per generation), with `trainer_state`, `log_extra`, `log_metric` beside them (taken and
ignored here). The dataset needs a `task_id` column (the server registers each task's suite as
`humaneval/<task_id>`: `verifier.bench.humaneval.write_suites`); an `entry_point` column is used
when present (only what the entry point needs is checked: a top-level `print(...)` or
`if __name__ == "__main__":` of the answer does not run).

- Standard (text) datasets: a prompt is HumanEval's code prompt (signature and docstring) and a
  completion is what the model wrote after it: a plain continuation, or a chat answer.
- Conversational datasets: a prompt is a list of messages and a completion is
  `[{"role": "assistant", "content": ...}]`; the answer is the last message's text (its `text`
  parts when the content is a list of parts). The answer must hold the whole function; a
  `code_prompt` column (HumanEval's prompt) gives it the prompt's imports.

**The answer's code** is taken out on the server (`verifier.extract`, EvalPlus's sanitize): the
last fenced ```` ```python ```` block that parses, or the whole text when it is code, with
`<think>...</think>` dropped. The whole step is one `/v1/batch` (`Client.rewards`).

**What a reward means.** 1.0: every test of the task passed. 0.0: the answer is at fault: wrong,
crashed, too slow or too big, a syntax error, or no code in it at all (`invalid_input`, "the
completion has no Python code"). None: the verifier could not judge it (its own fault or a host
too busy, after the client's retries); TRL turns None into NaN and leaves it out of the step's
rewards instead of punishing the model for our trouble (warning when every function of a row
gave None).

The server and token come from VERIFIER_URL and VERIFIER_TOKEN, or pass `client=`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from verifier.client import AsyncClient, Client
from verifier.serve.api import BatchItem, ExtractOptions

Message = Mapping[str, Any]
Completion = str | Sequence[Message]


def message_text(content: Any) -> str:
    """A message's text: a string, or the `text` of each part of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def completion_text(completion: Completion) -> str:
    """A completion's text: TRL passes plain strings, or (conversational data) a list of messages."""
    if isinstance(completion, str):
        return completion
    return message_text(completion[-1].get("content", "")) if completion else ""


def items(
    prompts: Sequence[str | Sequence[Message]],
    completions: Sequence[Completion],
    task_id: Sequence[str],
    entry_point: Sequence[str] | None = None,
    code_prompt: Sequence[str] | None = None,
) -> list[BatchItem]:
    """One batch item per generation: the answer, its task's suite, and how to take its code out."""
    made = []
    for n, (prompt, completion, task) in enumerate(zip(prompts, completions, task_id, strict=True)):
        code = code_prompt[n] if code_prompt is not None else (prompt if isinstance(prompt, str) else "")
        extract = ExtractOptions(entry_point=entry_point[n] if entry_point is not None else None, prompt=code)
        made.append(
            BatchItem(id=str(n), candidate=completion_text(completion), suite=f"humaneval/{task}", extract=extract)
        )
    return made


def _client() -> Client:
    return Client(os.environ["VERIFIER_URL"], os.environ["VERIFIER_TOKEN"])


def humaneval_reward(
    prompts: Sequence[str | Sequence[Message]],
    completions: Sequence[Completion],
    task_id: Sequence[str],
    entry_point: Sequence[str] | None = None,
    code_prompt: Sequence[str] | None = None,
    *,
    client: Client | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """One reward per completion (1.0, 0.0 or None: the module's documentation says what each
    means). `client`: an open Client (default: one from VERIFIER_URL and VERIFIER_TOKEN, for this call)."""
    own = client is None
    client = client or _client()
    try:
        return client.rewards(items(prompts, completions, task_id, entry_point, code_prompt))
    finally:
        if own:
            client.close()


async def humaneval_reward_async(
    prompts: Sequence[str | Sequence[Message]],
    completions: Sequence[Completion],
    task_id: Sequence[str],
    entry_point: Sequence[str] | None = None,
    code_prompt: Sequence[str] | None = None,
    *,
    client: AsyncClient | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The same for TRL's async reward functions (run on its event loop, beside the others)."""
    own = client is None
    client = client or AsyncClient(os.environ["VERIFIER_URL"], os.environ["VERIFIER_TOKEN"])
    try:
        return await client.rewards(items(prompts, completions, task_id, entry_point, code_prompt))
    finally:
        if own:
            await client.aclose()
