"""`verifier runs report|override`: offline metrics of recorded grading runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from verifier._distribution import install_hint

if TYPE_CHECKING:
    from verifier.agents.recorder import RunRecorder

runs_app = typer.Typer(
    help=escape(f"Metrics and human overrides of recorded grading runs (needs {install_hint('agents')})."),
    no_args_is_help=True,
)
DB_HELP = escape(
    "SQLAlchemy URL of the run recorder. Default: $VERIFIER_RUNS_DB, else "
    "sqlite:///$XDG_STATE_HOME/verifier/runs.db (~/.local/state/verifier/runs.db), "
    "where verified_rubric and the example record by default."
)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {escape(message)}")
    return typer.Exit(2)


def _recorder(db: str | None) -> RunRecorder:
    """The existing recorder database (never creates one)."""
    try:
        from verifier.agents.recorder import NoDatabase, RunRecorder, default_url
    except ImportError:
        raise _fail(f"install the agents extra: {install_hint('agents')}") from None
    url = db or default_url()
    try:
        return RunRecorder(url, create=False)
    except NoDatabase as exc:
        raise _fail(f"{exc}: no grading runs recorded there yet (choose another with --db)") from None
    except Exception as exc:  # noqa: BLE001 - a bad URL or unreachable database is a usage error
        shown = url.split("@")[-1] if "@" in url else url  # never print a password
        raise _fail(f"cannot open {shown}: {exc.__class__.__name__}") from None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


@runs_app.command("report")
def report(
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """First-pass and final pass rates, grading rounds, terminal statuses, tool errors and latency."""
    recorder = _recorder(db)
    try:
        rep = recorder.report()
    finally:
        recorder.close()
    if json_out:
        print(json.dumps(rep.as_dict(), indent=2))
        return
    table = Table(title=escape(f"grading runs in {recorder.display_url}"), show_header=False)
    table.add_row("runs", str(rep.runs))
    table.add_row("first-pass rate", _pct(rep.first_pass_rate))
    table.add_row("final pass rate", _pct(rep.final_pass_rate))
    table.add_row("mean grading rounds", "-" if rep.mean_grading_rounds is None else f"{rep.mean_grading_rounds:.2f}")
    for status, share in rep.terminal_status_share.items():
        table.add_row(f"  ended {escape(status)}", _pct(share))
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
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
) -> None:
    """Record a person's verdict on a run (a 'rejected' on a 'satisfied' run counts as overturned)."""
    if verdict not in ("rejected", "accepted"):
        raise _fail("--verdict must be rejected or accepted")
    recorder = _recorder(db)
    try:
        if not recorder.has_run(grading_run_id):
            raise _fail(f"no grading run {grading_run_id} in {recorder.display_url}")
        recorder.override(grading_run_id, verdict, note)
    finally:
        recorder.close()
    Console().print(f"recorded: {escape(grading_run_id)} {verdict}")
