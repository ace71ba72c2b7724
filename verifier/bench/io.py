"""stdin/stdout programs in the sandbox, with pass@k: what `verifier bench io` runs.

**Problems** (JSONL, one problem per line; close to the public competitive-programming sets:
APPS/TACO keep `input_output: {"inputs": [...], "outputs": [...]}`, CodeContests
`private_tests: {"input": [...], "output": [...]}`, both map one to one onto `tests`)::

    {"problem_id": "a-plus-b",
     "tests": [{"input": "1 2\\n", "output": "3\\n"}, ...],   # at least one
     "compare": "tokens",          # optional: exact | tokens (default) | float | checker
     "abs_tol": 1e-6, "rel_tol": 1e-6,                       # optional, for float
     "checker": "def check(input, output, expected): ...",  # optional: a special judge (Python
                                   # source, trusted: it runs on the trusted side); implies compare "checker"
     "time_limit_s": 2.0,          # optional, per case
     "memory_bytes": 268435456,    # optional, per case
     "meta": {...}}                # optional, anything (statement, source, tags); ignored

Unknown keys are refused, so a misspelt limit is never silently ignored.

**Samples** (JSONL)::

    {"problem_id": "a-plus-b", "program": "a, b = map(int, input().split())\\nprint(a + b)\\n", ...}

A sample may carry `language` (SandboxFusion's names: python by default, c, cpp, java, nodejs or
javascript, go, rust, bash; docs/programs.md). Other keys of a sample are kept and written back
with its result. Each problem becomes a program
suite (`suite.toml` with `kind = "program"`, `cases.jsonl`, `checker.py`), so a sample is verified
exactly as `verifier check PROGRAM.py --suite DIR` would verify it, and its evidence names the
suite's digest. pass@k follows the reference rule of `verifier.bench.passk`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from verifier.bench import harness
from verifier.bench.datasets import read_jsonl
from verifier.bench.harness import BenchRun, Job
from verifier.bench.passk import DEFAULT_KS, RUN_SLACK_S
from verifier.errors import InvalidInput
from verifier.evidence import Evidence, Status
from verifier.extract import Extracted, extract_code
from verifier.inputs import Candidate
from verifier.limits import DEFAULT_MEMORY_BYTES, DEFAULT_OUTPUT_BYTES, Limits, MiB, RunPolicy, Runtime
from verifier.runner.languages import LANGUAGES, NAMES
from verifier.runner.languages import canonical as canonical_language
from verifier.suite import PROGRAM_MEMORY_RESERVE, Suite, check_program, parse_manifest

if TYPE_CHECKING:
    from verifier.bench.store import EvidenceStore

CHECKER_FILE = "checker.py"
CASES_FILE = "cases.jsonl"
#: Room on top of the cases' own time limits for the whole sandboxed run of a sample.


class IOTest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: str
    output: str


class IOProblem(BaseModel):
    """One line of a problems file (see the module's documentation)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem_id: str = Field(min_length=1, max_length=200)
    tests: list[IOTest] = Field(min_length=1)
    compare: Literal["exact", "tokens", "float", "checker"] | None = None
    abs_tol: float = Field(1e-6, ge=0, allow_inf_nan=False)
    rel_tol: float = Field(1e-6, ge=0, allow_inf_nan=False)
    checker: str | None = None
    time_limit_s: float = Field(2.0, gt=0, le=600)
    memory_bytes: int = Field(256 * MiB, ge=16 * MiB)
    meta: Any = None

    @model_validator(mode="after")
    def _checker(self) -> IOProblem:
        if self.compare == "checker" and self.checker is None:
            raise ValueError("compare 'checker' needs a checker")
        if self.checker is not None and self.compare not in (None, "checker"):
            raise ValueError(f"a checker decides alone: drop compare {self.compare!r}")
        return self

    @property
    def mode(self) -> str:
        return "checker" if self.checker is not None else (self.compare or "tokens")


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    return repr(value)


def problem_suite(problem: IOProblem) -> Suite:
    """The program suite of a problem: suite.toml, cases.jsonl and (if any) checker.py.
    Raises InvalidInput when the problem cannot make a usable suite."""
    settings: dict[str, object] = {
        "cases": CASES_FILE,
        "compare": problem.mode,
        "time_limit_s": problem.time_limit_s,
        "memory_bytes": problem.memory_bytes,
    }
    if problem.mode == "float":
        settings |= {"abs_tol": problem.abs_tol, "rel_tol": problem.rel_tol}
    files = {
        CASES_FILE: b"".join(
            json.dumps({"name": str(i), "input": t.input, "output": t.output}).encode() + b"\n"
            for i, t in enumerate(problem.tests, start=1)
        )
    }
    if problem.checker is not None:
        settings["checker"] = CHECKER_FILE
        files[CHECKER_FILE] = problem.checker.encode()
    toml = f'kind = "program"\nname = {_toml_value(problem.problem_id)}\n\n[program]\n' + "".join(
        f"{key} = {_toml_value(value)}\n" for key, value in settings.items()
    )
    files["suite.toml"] = toml.encode()
    where = f"problem {problem.problem_id}"
    manifest = parse_manifest(files["suite.toml"], where)
    check_program(files, manifest, where)
    return Suite(files=files, manifest=manifest, name=problem.problem_id)


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of a JSONL file. Raises ValueError naming a
    line that is not JSON or not an object."""
    for number, raw in read_jsonl(path):
        if not isinstance(raw, dict):
            raise ValueError(f"{path}:{number}: a line must be a JSON object")
        yield number, raw


@dataclass(frozen=True)
class Problem:
    spec: IOProblem
    suite: Suite


def load_problems(path: Path, *, time_limit_s: float | None = None) -> dict[str, Problem]:
    """The problems of a problems file, each validated and made into its suite; `time_limit_s`
    (`--timeout`) is the per-case limit of the problems that set none. Raises ValueError naming
    the line and the key."""
    problems: dict[str, Problem] = {}
    for number, raw in read_objects(path):
        if time_limit_s is not None and "time_limit_s" not in raw:
            raw = {**raw, "time_limit_s": time_limit_s}
        try:
            spec = IOProblem.model_validate(raw)
            suite = problem_suite(spec)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "problem"
            raise ValueError(f"{path}:{number}: {key}: {str(first['msg']).removeprefix('Value error, ')}") from None
        except InvalidInput as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if spec.problem_id in problems:
            raise ValueError(f"{path}:{number}: problem_id {spec.problem_id!r} appears twice")
        problems[spec.problem_id] = Problem(spec, suite)
    return problems


@dataclass(frozen=True)
class Sample:
    problem_id: str
    program: str
    line: dict[str, Any]
    #: The program's language (the sample's `language`, SandboxFusion's names; python by default).
    language: str = "python"

    def candidate(self) -> Candidate:
        """The program as a candidate; another language than Python is named by its label's
        extension, which `verifier.verify.program_language` reads."""
        if self.language == "python":
            return Candidate.from_text(self.program)
        return Candidate.from_text(self.program, label=f"sample{LANGUAGES[self.language].extensions[0]}")


def read_samples(path: Path, problems: dict[str, Problem], limit: int | None = None) -> list[Sample]:
    samples: list[Sample] = []
    for number, raw in read_objects(path):
        if limit is not None and len(samples) >= limit:
            break
        if not isinstance(raw.get("problem_id"), str) or not isinstance(raw.get("program"), str):
            raise ValueError(f"{path}:{number}: a sample needs problem_id and program (strings)")
        if raw["problem_id"] not in problems:
            raise ValueError(f"{path}:{number}: unknown problem_id {raw['problem_id'][:100]!r}")
        language = raw.get("language", "python")
        named = canonical_language(language) if isinstance(language, str) else None
        if named is None:
            raise ValueError(f"{path}:{number}: unknown language {str(language)[:40]!r} (one of {', '.join(NAMES)})")
        samples.append(Sample(raw["problem_id"], raw["program"], raw, named))
    return samples


def sanitize_samples(samples: Sequence[Sample]) -> tuple[list[Sample], dict[int, str]]:
    """`--sanitize`: each program taken out of a model's chat answer (`verifier.extract`: the last
    fenced block that parses, or the whole text when it is code; the whole program, top level
    and all), and (sample index -> why) for the answers with no code (answered invalid_input)."""
    return harness.sanitized(samples, _extract, lambda sample, code: replace(sample, program=code))


def _extract(sample: Sample) -> Extracted:
    """The extractor reads Python; a program in another language is taken as sent."""
    if sample.language != "python":
        return Extracted(code=sample.program, source="whole", reason="taken as sent: not Python")
    return extract_code(sample.program)


def unique_jobs(samples: Iterable[Sample], problems: dict[str, Problem]) -> tuple[list[Job], list[int]]:
    """Identical (problem, program bytes) pairs are verified once: (jobs, job index per sample)."""
    return harness.unique_jobs(
        (
            s.problem_id if s.language == "python" else f"{s.problem_id} ({s.language})",
            s.candidate(),
            problems[s.problem_id].suite,
        )
        for s in samples
    )


def bench_limits(problems: Iterable[Problem], runtime: Runtime = "runc") -> Limits:
    """Sandbox limits that fit every problem: each sample's whole run may take all its cases'
    time limits (plus slack), memory leaves the trusted side its reserve, and a case may print
    twice its expected output; under `runtime`."""
    specs = list(problems)
    run_s = max((len(p.spec.tests) * p.spec.time_limit_s for p in specs), default=0.0) + RUN_SLACK_S
    memory = max((p.spec.memory_bytes for p in specs), default=0) + PROGRAM_MEMORY_RESERVE
    output = max((len(t.output.encode()) for p in specs for t in p.spec.tests), default=0) * 2 + 64 * 1024
    return Limits(
        timeout_s=min(3600.0, max(60.0, run_s)),
        memory_bytes=max(DEFAULT_MEMORY_BYTES, memory),
        output_bytes=max(DEFAULT_OUTPUT_BYTES, output),
        runtime=runtime,
    )


def result_row(sample: Sample, ev: Evidence) -> dict[str, Any]:
    """A results-file line: the sample's own keys, then what verification found."""
    first = next((f for f in ev.failures), None)
    return {
        **sample.line,
        "passed": ev.ok,
        "status": ev.status.value,
        "reason": ev.reason,
        "cases_passed": sum(c.status is Status.PASSED for c in ev.cases),
        "cases": len(ev.cases),
        "first_failure": None if first is None else f"{first.test_id}: {first.message}",
        "evidence_id": ev.evidence_id,
    }


def evaluate(
    samples: Sequence[Sample],
    problems: dict[str, Problem],
    *,
    ks: Iterable[int] = DEFAULT_KS,
    workers: int | None = None,
    policy: RunPolicy = "reuse",
    image: str | None = None,
    progress: bool = True,
    runtime: Runtime = "runc",
    store: EvidenceStore | None = None,
    ray: str | None = None,
    sanitize: bool = False,
    overloaded_retries: int | None = None,
) -> BenchRun:
    """Verify every sample against its problem's suite on a warm pool (or cold containers), or
    with `ray` on a warm pool on every node of that Ray cluster (`harness.bench_verifier`; each
    node finds or builds the image of our recipe when `image` is None). `workers`: concurrent
    sandboxes (default: the core count, or the cluster's slots). `wall_s` is the batch's time
    once the pool is warm; `startup_s` the pool's start before it. With a `store`, samples it
    holds a verdict for are not verified again (`harness.run`). `overloaded_retries`: how often a
    sample that ended overloaded is tried again after growing pauses (None: `OVERLOADED_RETRIES`)."""
    import time

    from verifier.sandbox.admission import default_workers

    no_code: dict[int, str] = {}
    if sanitize:
        samples, no_code = sanitize_samples(samples)
    jobs, mapping = unique_jobs(samples, problems)
    limits = bench_limits((problems[s.problem_id] for s in samples), runtime)
    slots = workers or default_workers()
    started = time.monotonic()
    with harness.bench_verifier(policy, workers=slots, limits=limits, image=image, ray=ray) as verifier:
        cluster = harness.cluster_of(verifier, ray)
        if cluster is not None and workers is None:
            slots = cluster.slots
        warm_up = getattr(verifier.backend_if_made, "warm_up", None)
        if warm_up is not None:
            warm_up()
        ready = time.monotonic()
        run = harness.run(
            verifier,
            [s.problem_id for s in samples],
            jobs,
            mapping,
            workers=slots,
            started=ready,
            ks=ks,
            progress=progress,
            store=store,
            decided=harness.no_code(verifier, jobs, mapping, no_code),
            overloaded_retries=overloaded_retries,
        )
        ray_summary = None if cluster is None else harness.cluster_summary(cluster)
    distinct = {j: run.evidence[i] for i, j in enumerate(mapping)}
    summary = {
        **run.summary,
        "cases_run": sum(sum(c.ran for c in ev.cases) for ev in distinct.values()),
        "startup_s": round(ready - started, 2),
        "policy": policy,
        "runtime": runtime,
        "problems_attempted": len({s.problem_id for s in samples}),
        "problems_in_file": len(problems),
    }
    if ray_summary is not None:
        summary["ray"] = ray_summary
    return BenchRun(evidence=run.evidence, summary=summary)
