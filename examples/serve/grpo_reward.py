"""A reward function for a GRPO-style trainer that scores code through `verifier serve`.

TRL's reward-function signature: the completions of one step in, one float per completion out,
with the dataset's other columns as keyword arguments. Here the dataset is HumanEval-shaped
(columns `prompt` and `task_id`) and the server registers every task's suite under
`humaneval/<task_id>` (`verifier.bench.humaneval.write_suites` writes them; docs/serve.md).
The whole step goes to the server as one `/v1/batch`, so a step of 64 completions is one
request, verified on the server's warm pool, and no rollout worker imports the verifier's engine.

    from trl import GRPOConfig, GRPOTrainer
    from examples.serve.grpo_reward import humaneval_reward

    trainer = GRPOTrainer(model=..., reward_funcs=[humaneval_reward], train_dataset=dataset, args=GRPOConfig(...))

The server and token come from VERIFIER_URL and VERIFIER_TOKEN. A completion gets 1.0 when its
evidence is `ok` (every test of the task passed), 0.0 when the candidate failed (wrong, crashed,
too slow, too big), and None when the verifier could not judge it (its own fault or a host too
busy, after the client's retries): TRL leaves a None out of the step's rewards instead of
punishing the model for our trouble.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from verifier.client import Client
from verifier.evidence import Fault


def completion_text(completion: str | Sequence[dict[str, Any]]) -> str:
    """A completion's text: TRL passes plain strings, or (conversational data) a list of messages."""
    if isinstance(completion, str):
        return completion
    return str(completion[-1]["content"]) if completion else ""


def humaneval_reward(
    completions: Sequence[str | Sequence[dict[str, Any]]],
    prompt: Sequence[str],
    task_id: Sequence[str],
    *,
    client: Client | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """One reward per completion: the task's prompt + the completion, checked against the task's
    own suite on the server. `client`: an open Client (default: one from VERIFIER_URL and
    VERIFIER_TOKEN, for this call)."""
    own = client is None
    client = client or Client(os.environ["VERIFIER_URL"], os.environ["VERIFIER_TOKEN"])
    try:
        items = [
            (str(i), p + completion_text(c), f"humaneval/{t}")
            for i, (c, p, t) in enumerate(zip(completions, prompt, task_id, strict=True))
        ]
        rewards: list[float | None] = [None] * len(items)
        for line in client.batch(items):
            ev = line.evidence
            if ev.fault in (Fault.NONE, Fault.CANDIDATE, Fault.INPUT):
                rewards[int(line.id)] = 1.0 if ev.ok else 0.0
        return rewards
    finally:
        if own:
            client.close()
