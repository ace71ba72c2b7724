"""`verifier runs report|override`: offline metrics of recorded grading runs."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

runs_app = typer.Typer(
    help="Metrics and human overrides of recorded grading runs (needs verifier[agents]).", no_args_is_help=True
)
DB_HELP = "SQLAlchemy URL of the run recorder (e.g. sqlite:///.verifier/runs.db or postgresql://...)."


def _recorder(db: str):  # type: ignore[no-untyped-def]
    try:
        from verifier.agents.recorder import RunRecorder
    except ImportError:
        Console(stderr=True, soft_wrap=True).print(
            "[red]error:[/] install the agents extra: pip install 'verifier[agents]'"
        )
        raise typer.Exit(2) from None
    try:
        return RunRecorder(db)
    except Exception as exc:  # noqa: BLE001 - a bad URL or unreachable database is a usage error
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] cannot open {db}: {exc.__class__.__name__}: {exc}")
        raise typer.Exit(2) from None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


@runs_app.command("report")
def report(
    db: Annotated[str, typer.Option(help=DB_HELP)] = "sqlite:///.verifier/runs.db",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """First-pass and final pass rates, grading rounds, terminal statuses, tool errors and latency."""
    rep = _recorder(db).report()
    if json_out:
        print(json.dumps(rep.as_dict(), indent=2))
        return
    table = Table(title=f"grading runs in {db}", show_header=False)
    table.add_row("runs", str(rep.runs))
    table.add_row("first-pass rate", _pct(rep.first_pass_rate))
    table.add_row("final pass rate", _pct(rep.final_pass_rate))
    table.add_row("mean grading rounds", "-" if rep.mean_grading_rounds is None else f"{rep.mean_grading_rounds:.2f}")
    for status, share in rep.terminal_status_share.items():
        table.add_row(f"  ended {status}", _pct(share))
    table.add_row("evidence tool calls", str(rep.tool_calls))
    table.add_row("evidence tool error rate", _pct(rep.tool_error_rate))
    p50, p95 = rep.tool_latency_p50_s, rep.tool_latency_p95_s
    table.add_row("tool latency p50 / p95", "-" if p50 is None else f"{p50:.2f} s / {p95:.2f} s")
    table.add_row("satisfied overturned by a person", f"{rep.overturned_satisfied} of {rep.satisfied_runs}")
    Console().print(table)


@runs_app.command("override")
def override(
    grading_run_id: Annotated[str, typer.Argument(help="The run a person reviewed.")],
    verdict: Annotated[str, typer.Option(help="The person's verdict: rejected or accepted.")] = "rejected",
    note: Annotated[str, typer.Option(help="Why.")] = "",
    db: Annotated[str, typer.Option(help=DB_HELP)] = "sqlite:///.verifier/runs.db",
) -> None:
    """Record a person's verdict on a run (a 'rejected' on a 'satisfied' run counts as overturned)."""
    if verdict not in ("rejected", "accepted"):
        Console(stderr=True).print("[red]error:[/] --verdict must be rejected or accepted")
        raise typer.Exit(2)
    _recorder(db).override(grading_run_id, verdict, note)
    Console().print(f"recorded: {grading_run_id} {verdict}")
