"""`verifier bench`: the command group; `bench io` (programs on stdin/stdout) and `bench report`
here, `bench humaneval` in `verifier.cli.bench_humaneval`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.cli import bench_common as common
from verifier.cli.bench_humaneval import humaneval
from verifier.cli.common import Command, Group, fail, stderr

if TYPE_CHECKING:  # loaded when a command runs (every `verifier` command imports this module)
    from verifier.bench.harness import BenchRun
    from verifier.bench.io import Problem as IOProblem
    from verifier.bench.io import Sample as IOSample


bench_app = typer.Typer(
    cls=Group, help=escape(f"Benchmark harnesses (needs {install_hint('bench')})."), no_args_is_help=True
)


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
    ] = common.REFERENCE_KS,
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
    policy: common.PolicyOption = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, status counts, timing) as JSON.")
    ] = None,
    sanitize: common.SanitizeOption = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache", help="Verify every sample again: start SAMPLES_evidence.jsonl anew instead of serving it."
        ),
    ] = False,
    runtime: common.RuntimeOption = "runc",
    ray: common.RayOption = None,
    report: common.ReportOption = None,
    overloaded_retries: common.OverloadedRetriesOption = None,
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

    common.check_inputs(samples, problems, ray=ray, policy=policy, report=report)
    if timeout is not None and not 0 < timeout <= 600:
        raise fail(f"--timeout must be more than 0 and at most 600 seconds, not {timeout:g}", option="--timeout")
    common.check_workers(workers)
    from verifier.bench import io as bio

    ks = common.parse_ks(k)
    try:
        probs = bio.load_problems(problems, time_limit_s=timeout)
        items = bio.read_samples(samples, probs, limit)
    except common.INPUT_ERRORS as exc:
        raise common.input_failure(exc, samples, problems) from None
    if not items:
        raise fail("SAMPLES: no samples to verify", option="SAMPLES")

    if workers is None and ray is None:
        workers = default_workers()
    options = {
        "ks": ks,
        "workers": workers,
        "policy": policy,
        "runtime": runtime,
        "ray": ray,
        "sanitize": sanitize,
        "overloaded_retries": overloaded_retries,
    }
    run = _run_io(items, probs, options, samples, fresh=no_cache)
    out_path = Path(f"{samples}_results.jsonl")
    with open(out_path, "w") as fh:
        for sample, ev in zip(items, run.evidence, strict=True):
            fh.write(json.dumps(bio.result_row(sample, ev)) + "\n")
    summary = common.run_summary(run.summary, out_path, samples)
    common.finish(summary, out_path, report=report, json_out=json_out, ks=ks, whose="the programs")


def _run_io(
    items: list[IOSample], problems: dict[str, IOProblem], options: dict[str, Any], samples: Path, *, fresh: bool
) -> BenchRun:
    """Open the run's evidence store, build the image (on a Ray cluster every node finds or
    builds its own), verify (`options`: bio.evaluate's)."""
    from verifier.bench import io as bio

    with common.open_store(common.store_path(samples), fresh=fresh) as store, common.run_failures(store):
        image = None if options["ray"] is not None else common.local_image(options["runtime"])
        attempted = len({s.problem_id for s in items})
        workers = "the Ray cluster's slots" if options["workers"] is None else f"{options['workers']} workers"
        stderr().print(
            f"{len(items)} samples of {attempted} problems, {workers}, policy {options['policy']}, "
            f"runtime {options['runtime']}"
        )
        return bio.evaluate(items, problems, image=image, store=store, **options)


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
    k: Annotated[str, typer.Option("--k", help="The k of pass@k, comma-separated.")] = common.REFERENCE_KS,
) -> None:
    """Make the report of a finished run from its files: DIR/index.html (one self-contained page,
    no script and no network: open it in any browser), DIR/summary.png (embed it in a README) and
    DIR/report.json (the numbers).

    The same report `--report DIR` writes at the end of `verifier bench humaneval` or `bench io`.
    Results lines with plus verdicts (plus_passed) get base and plus columns side by side."""
    common.require_file(results, "RESULTS", "results")
    if evidence is not None:
        common.require_file(evidence, "--evidence", "evidence")
    ks = common.parse_ks(k)
    common.check_report_dir(out_dir, "DIR")
    run: dict[str, Any] = {}
    if summary is not None:
        common.require_file(summary, "--summary", "summary")
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


bench_app.command("humaneval", cls=Command)(humaneval)
