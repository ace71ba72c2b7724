"""`verifier bench humaneval --sanitize` and `bench io --sanitize` on the real sandbox: samples that
are models' chat answers (prose, fences, reasoning) get the verdicts of their bare code, and an
answer with no code is invalid_input, never run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.bench import humaneval as he
from verifier.bench import io as bio
from verifier.evidence import Status

pytestmark = [pytest.mark.docker]

PROBLEMS = he.load_problems()
TASKS = [f"HumanEval/{n}" for n in (0, 4, 12, 32, 38, 50)]  # 32, 38, 50: the tests call the prompt's helpers
SHIPPED = Path(__file__).resolve().parents[2] / "examples" / "programs"


def chat(task: str, n: int) -> str:
    """The canonical solution as a model writes it in chat: three shapes in turn."""
    problem = PROBLEMS[task]
    code = problem.prompt + problem.line["canonical_solution"]
    if n % 3 == 0:
        return f"Sure! Here is a solution:\n\n```python\n{code}\n```\n\nIt runs in linear time."
    if n % 3 == 1:
        return (
            f"<think>\nThe trick is\n```python\nreturn 0\n```\n</think>\r\n```py\r\n{code}\r\nprint('done')\r\n```\r\n"
        )
    return problem.line["canonical_solution"]  # a bare continuation of the prompt


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_chat_wrapped_canonical_solutions_get_the_pass_at_k_of_the_bare_ones(tmp_path: Path) -> None:
    bare = [{"task_id": t, "completion": PROBLEMS[t].line["canonical_solution"]} for t in TASKS]
    wrapped = [{"task_id": t, "completion": chat(t, n)} for n, t in enumerate(TASKS)]
    options = he.Options(workers=2, progress=False, ks=[1])
    plain = he.evaluate(he.load(write(tmp_path / "bare.jsonl", bare)), options)
    raw = he.evaluate(he.load(write(tmp_path / "raw.jsonl", wrapped)), options)
    sanitized = he.evaluate(
        he.load(write(tmp_path / "chat.jsonl", wrapped)), he.Options(workers=2, progress=False, ks=[1], sanitize=True)
    )
    assert plain.summary["pass@1"] == 1.0
    assert sanitized.summary["pass@1"] == plain.summary["pass@1"]
    assert raw.summary["pass@1"] < 1.0  # without --sanitize the fenced ones are syntax errors


def test_an_answer_with_no_code_is_invalid_input(tmp_path: Path) -> None:
    rows = [{"task_id": "HumanEval/0", "completion": "I do not know how to do this."}]
    run = he.evaluate(
        he.load(write(tmp_path / "none.jsonl", rows)), he.Options(workers=1, progress=False, ks=[1], sanitize=True)
    )
    (ev,) = run.evidence
    assert ev.status is Status.INVALID_INPUT and "no Python code" in ev.reason
    assert run.summary["verified"] == 0  # nothing ran


def test_bench_io_sanitize_takes_the_program_out_of_chat(tmp_path: Path) -> None:
    problems = bio.load_problems(SHIPPED / "problems.jsonl")
    shipped = bio.read_samples(SHIPPED / "samples.jsonl", problems)[:3]
    rows = [
        {"problem_id": s.problem_id, "program": f"Here you go:\n```python\n{s.program}\n```\nBye."} for s in shipped
    ]
    rows.append({"problem_id": shipped[0].problem_id, "program": "No idea, sorry."})
    samples = bio.read_samples(write(tmp_path / "chat.jsonl", rows), problems)
    plain = bio.evaluate(shipped, problems, workers=2, progress=False)
    run = bio.evaluate(samples, problems, workers=2, progress=False, sanitize=True)
    assert [ev.status for ev in run.evidence[:3]] == [ev.status for ev in plain.evidence]
    assert run.evidence[3].status is Status.INVALID_INPUT
