"""`eval_results.json` in EvalPlus's layout, for tools that read what `evalplus.evaluate` writes.

The layout (EvalPlus's `evalplus/evaluate.py`)::

    {"date": "YYYY-MM-DD HH:MM", "hash": <the dataset's md5>,
     "eval": {task_id: [{"task_id", "solution", "base_status", "plus_status",
                         "base_fail_tests", "plus_fail_tests"}, ...]},   # one per sample, in order
     "pass_at_k": {"base": {"pass@1": ...}, "plus": {...}}}

Statuses are EvalPlus's words, "pass", "fail" or "timeout"; `plus_status` is null with
`--base-only` (and for a problem without plus inputs when `--plus` did not run); a sample the
verifier could not judge (infra_error, overloaded: not the model's doing) has null statuses; an
infra_error counts as not passed, as in the summary's pass@k, and one that stayed overloaded
(the host's doing) is left out of pass@k, base + plus too when either run of it was. A failing status lists the failing
inputs (EvalPlus problems: the dataset's inputs, as the problems file has them): only the first
one, or every one with `test_details`. `hash` is the md5 of the problems file's bytes (EvalPlus
hashes its dataset file the same way). pass@k is reported for each k every task has at least k
samples for, as EvalPlus does.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from verifier.bench.datasets import Problem
from verifier.bench.humaneval import HumanEvalRun, candidate_source
from verifier.bench.passk import pass_at_k
from verifier.evidence import Evidence, FailureKind, Fault, Status, is_verdict

Dataset = Literal["humaneval", "mbpp"]
#: The task id's prefix of each dataset (HumanEval/0, Mbpp/2).
TASK_PREFIX: dict[str, str] = {"humaneval": "HumanEval/", "mbpp": "Mbpp/"}
EVALPLUS_KS = (1, 10, 100)


def results_path(samples: Path) -> Path:
    """Where EvalPlus puts the results of a samples file: `x.jsonl` -> `x.eval_results.json` (or
    the legacy `x_eval_results.json` when that one exists); a folder -> `folder/eval_results.json`."""
    if samples.is_dir():
        return samples / "eval_results.json"
    text = str(samples)
    stem = text.removesuffix(".jsonl") if text.endswith(".jsonl") else text
    legacy = Path(f"{stem}_eval_results.json")
    return legacy if legacy.exists() else Path(f"{stem}.eval_results.json")


def _group(test_id: str) -> tuple[str, str]:
    """(group, test name) of a failing test: EvalPlus suites name theirs test_base_<i> and
    test_plus_<i>; any other test belongs to the base tests."""
    name = test_id.rpartition("::")[2]
    return ("plus" if name.startswith("test_plus_") else "base"), name


def _statuses(ev: Evidence, problem: Problem, test_details: bool) -> dict[str, tuple[str | None, list[Any]]]:
    """group -> (status, failing inputs) for one sample's evidence."""
    if not is_verdict(ev.status):
        return {"base": (None, []), "plus": (None, [])}
    if ev.ok:
        return {"base": ("pass", []), "plus": ("pass", [])}
    failed: dict[str, list[tuple[str, FailureKind]]] = {"base": [], "plus": []}
    for f in ev.failures:
        group, name = _group(f.test_id)
        failed[group].append((name, f.kind))
    whole = "timeout" if ev.status is Status.TIMEOUT else "fail"
    if not failed["base"] and not failed["plus"]:  # the run failed as a whole (an import, a hang)
        return {"base": (whole, []), "plus": (whole, [])}
    out: dict[str, tuple[str | None, list[Any]]] = {}
    for group, tests in failed.items():
        if not tests:
            out[group] = ("pass", [])
            continue
        status = "timeout" if any(kind is FailureKind.TIMEOUT for _, kind in tests) else "fail"
        inputs = [problem.inputs[name] for name, _ in tests if name in problem.inputs]
        out[group] = (status, inputs if test_details else inputs[:1])
    return out


def layout(
    run: HumanEvalRun,
    problems_file: Path,
    *,
    base_only: bool = False,
    test_details: bool = False,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The EvalPlus results document of a finished run."""
    plus_evidence: Sequence[Evidence | None] = run.plus_evidence or [None] * len(run.samples)
    results: dict[str, list[dict[str, Any]]] = {}
    #: Per task, each sample's (base judged, plus judged): a verdict the host was too busy to
    #: give (overloaded) is no failure of the model's, and out of pass@k, as in the summary.
    judged: dict[str, list[tuple[bool, bool]]] = {}
    for sample, ev, plus_ev in zip(run.samples, run.evidence, plus_evidence, strict=True):
        problem = run.problems[sample.task_id]
        groups = _statuses(ev, problem, test_details)
        has_plus = any(name.startswith("test_plus_") for name in problem.inputs)
        plus_status, plus_fails = groups["plus"] if has_plus else (None, [])
        if plus_ev is not None:  # --plus: the sample under base + generated inputs, its whole suite
            plus_status, plus_fails = _whole(_statuses(plus_ev, run.plus_problems[sample.task_id], test_details))
        if base_only:
            plus_status, plus_fails = None, []
        base_judged = ev.fault is not Fault.HOST
        plus_judged = base_judged and (plus_ev is None or plus_ev.fault is not Fault.HOST)
        judged.setdefault(sample.task_id, []).append((base_judged, plus_judged))
        results.setdefault(sample.task_id, []).append(
            {
                "task_id": sample.task_id,
                "solution": candidate_source(problem, sample),
                "base_status": groups["base"][0],
                "plus_status": plus_status,
                "base_fail_tests": groups["base"][1],
                "plus_fail_tests": plus_fails,
            }
        )
    tasks = list(results)
    base_rows = [[r for r, (ok, _) in zip(results[t], judged[t], strict=True) if ok] for t in tasks]
    plus_rows = [[r for r, (_, ok) in zip(results[t], judged[t], strict=True) if ok] for t in tasks]
    base = [sum(r["base_status"] == "pass" for r in rows) for rows in base_rows]
    plus = [sum(r["base_status"] == r["plus_status"] == "pass" for r in rows) for rows in plus_rows]
    pass_at: dict[str, dict[str, float]] = {"base": _pass_at([len(rows) for rows in base_rows], base)}
    if not base_only and any(r["plus_status"] is not None for rows in results.values() for r in rows):
        pass_at["plus"] = _pass_at([len(rows) for rows in plus_rows], plus)
    return {
        "date": (now or datetime.now()).strftime("%Y-%m-%d %H:%M"),
        "hash": hashlib.md5(problems_file.read_bytes(), usedforsecurity=False).hexdigest(),
        "eval": results,
        "pass_at_k": pass_at,
    }


def _whole(groups: dict[str, tuple[str | None, list[Any]]]) -> tuple[str | None, list[Any]]:
    """One status for every group of a suite's tests (a `--plus` suite's whole verdict: an
    EvalPlus problem's plus suite is its own, with its test_plus_<i> tests among them)."""
    statuses = [status for status, _ in groups.values()]
    fails = [item for _, items in groups.values() for item in items]
    if None in statuses:
        return None, []
    for worst in ("timeout", "fail"):
        if worst in statuses:
            return worst, fails
    return "pass", []


def _pass_at(totals: list[int], correct: list[int]) -> dict[str, float]:
    return {
        f"pass@{k}": sum(pass_at_k(n, c, k) for n, c in zip(totals, correct, strict=True)) / len(totals)
        for k in EVALPLUS_KS
        if totals and min(totals) >= k
    }


def write(path: Path, document: dict[str, Any]) -> None:
    """Write the document whole or not at all (a temporary file renamed over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(document))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
