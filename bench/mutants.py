"""Seeded, deterministic mutants of HumanEval's canonical solutions.

For each task, mutation rules are tried in an order drawn from `random.Random(f"{seed}:{task_id}")`;
the first rule that changes the completion and still compiles wins. Falls back to `return None`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

Rule = tuple[str, Callable[[str], str]]


def _first(pattern: str, repl: str) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, repl, text, count=1)


RULES: list[Rule] = [
    ("flip <", _first(r"(?<![<>=!])<(?![<=])", ">=")),
    ("flip >", _first(r"(?<![<>=!-])>(?![>=])", "<=")),
    ("flip ==", _first(r"==", "!=")),
    ("flip !=", _first(r"!=", "==")),
    ("constant +1", _first(r"(?<![\w.])([0-9]+)(?![\w.])", lambda m: str(int(m.group(1)) + 1))),  # type: ignore[arg-type]
    ("+ to -", _first(r" \+ ", " - ")),
    ("and to or", _first(r"\band\b", "or")),
    ("True to False", _first(r"\bTrue\b", "False")),
]


def mutate(task_id: str, prompt: str, completion: str, seed: int = 0) -> tuple[str, str]:
    """(mutant completion, rule name)."""
    order = RULES[:]
    random.Random(f"{seed}:{task_id}").shuffle(order)
    for name, rule in order:
        changed = rule(completion)
        if changed == completion:
            continue
        try:
            compile(prompt + changed, task_id, "exec")
        except SyntaxError:
            continue
        return changed, name
    return "    return None\n", "return None"
