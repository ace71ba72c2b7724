"""`verifier runs list|show|report|override`: recorded grading runs, their metrics, and a person's verdicts."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from verifier._distribution import install_hint
from verifier.cli.common import Command, Group, fail
from verifier.text import one_line

if TYPE_CHECKING:
    from verifier.agents.recorder import RunRecorder

runs_app = typer.Typer(
    cls=Group,
    help=escape(f"Recorded grading runs: list, show, metrics and human overrides (needs {install_hint('agents')})."),
    no_args_is_help=True,
)
DB_HELP = escape(
    "SQLAlchemy URL of the run recorder. Default: $VERIFIER_RUNS_DB, else "
    "sqlite:///$XDG_STATE_HOME/verifier/runs.db (~/.local/state/verifier/runs.db), "
    "where verified_rubric and the example record by default."
)
JSON_HELP = "Print JSON (an error document when the database cannot be read)."


def _recorder(db: str | None) -> RunRecorder:
    """The existing recorder database (never creates one)."""
    try:
        from sqlalchemy.exc import ArgumentError

        from verifier.agents.recorder import NoDatabase, RunRecorder, default_url
    except ImportError:
        raise fail(f"install the agents extra: {install_hint('agents')}") from None
    url = db or default_url()
    try:
        return RunRecorder(url, create=False)
    except NoDatabase as exc:
        raise fail(f"{exc}: no grading runs recorded there yet (choose another with --db)", option="--db") from None
    except ArgumentError:
        raise fail(
            "--db: not a database URL; give a SQLAlchemy URL such as sqlite:///path/to/runs.db or postgresql://host/db",
            option="--db",
        ) from None
    except Exception as exc:  # noqa: BLE001 - an unreachable or unusable database is a usage error
        shown = url.split("@")[-1] if "@" in url else url  # never print a password
        raise fail(f"--db: cannot open {shown}: {exc.__class__.__name__}", option="--db") from None


def _run_id(recorder: RunRecorder, given: str) -> str:
    """The run `given` names: its whole id, or a prefix of exactly one run's (as `runs list` shows
    ids whole, a prefix is what a person copies). Fails with one line otherwise."""
    if recorder.has_run(given):
        return given
    matches = sorted({r.grading_run_id for r in recorder.runs()} if given else set())
    matches = [m for m in matches if m.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    where = recorder.display_url
    if not matches:
        raise fail(f"RUN_ID: no grading run {given} in {where} (see verifier runs list)", option="RUN_ID")
    shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
    raise fail(
        f"RUN_ID: {given} is the start of {len(matches)} runs in {where} ({shown}): give more of it", option="RUN_ID"
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


@runs_app.command("list", cls=Command)
def list_runs(
    limit: Annotated[int, typer.Option(min=1, help="Show at most this many runs, the latest first.")] = 20,
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """The recorded grading runs, the latest first: the run id that show and override take, the thread,
    rounds, final result, tool calls and any person's verdict."""
    recorder = _recorder(db)
    try:
        runs = recorder.runs(limit=limit)
    finally:
        recorder.close()
    if json_out:
        print(json.dumps([r.as_dict() for r in runs], indent=2))
        return
    table = Table(title=escape(f"grading runs in {recorder.display_url}"))
    # The run id whole (never wrapped or cut: `runs show` takes it, or a unique prefix of it).
    table.add_column("run", no_wrap=True, min_width=max((len(r.grading_run_id) for r in runs), default=3))
    for column in ("thread", "rounds", "final", "tool calls", "override", "last evaluated"):
        table.add_column(column)
    for r in runs:
        table.add_row(
            escape(r.grading_run_id),
            escape(one_line(r.thread_id or "-", 40)),
            str(r.rounds),
            escape(r.final_result),
            str(r.tool_calls),
            escape(r.override or "-"),
            _when(r.ended_at),
        )
    Console().print(table)


@runs_app.command("show", cls=Command)
def show(
    grading_run_id: Annotated[
        str, typer.Argument(metavar="RUN_ID", help="The run (see verifier runs list), or a unique start of its id.")
    ],
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """One grading run: each round's verdict and explanation, the evidence tool calls, any person's verdict."""
    recorder = _recorder(db)
    try:
        grading_run_id = _run_id(recorder, grading_run_id)
        evaluations = recorder.evaluations(grading_run_id)
        calls = recorder.tool_calls(grading_run_id)
        override = recorder.override_of(grading_run_id)
    finally:
        recorder.close()
    if json_out:
        doc = {
            "grading_run_id": grading_run_id,
            "evaluations": evaluations,
            "tool_calls": [c.__dict__ for c in calls],
            "override": override,
        }
        print(json.dumps(doc, indent=2, default=str))
        return
    out = Console()
    out.print(f"[bold]grading run[/] {escape(grading_run_id)}")
    for e in evaluations:
        flag = " [yellow](unverified)[/]" if e.get("unverified") else ""
        out.print(f"  round {e['iteration']}: [bold]{escape(str(e['result']))}[/]{flag}  {_when(e['recorded_at'])}")
        if e.get("explanation"):
            out.print(f"    {escape(one_line(str(e['explanation']), 300))}")
    table = Table(title="evidence tool calls")
    for column in ("round", "status", "evidence", "cached", "latest candidate", "latency"):
        table.add_column(column)
    for c in calls:
        latest = "-" if c.candidate_is_latest is None else ("yes" if c.candidate_is_latest else "no")
        table.add_row(
            "-" if c.iteration is None else str(c.iteration),
            escape(c.status),
            c.evidence_id[:16],
            "yes" if c.cached else "no",
            latest,
            f"{c.latency_s:.2f} s",
        )
    out.print(table)
    if override is not None:
        note = f": {escape(one_line(str(override['note']), 300))}" if override["note"] else ""
        out.print(f"  a person's verdict: [bold]{escape(str(override['verdict']))}[/]{note}")


@runs_app.command("report", cls=Command)
def report(
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
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


@runs_app.command("override", cls=Command)
def override(
    grading_run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN_ID", help="The run a person reviewed (see verifier runs list), or a unique start of its id."
        ),
    ],
    verdict: Annotated[Literal["rejected", "accepted"], typer.Option(help="The person's verdict.")] = "rejected",
    note: Annotated[str, typer.Option(help="Why.")] = "",
    db: Annotated[str | None, typer.Option(help=DB_HELP, show_default=False)] = None,
) -> None:
    """Record a person's verdict on a run (a 'rejected' on a 'satisfied' run counts as overturned)."""
    recorder = _recorder(db)
    try:
        grading_run_id = _run_id(recorder, grading_run_id)
        recorder.override(grading_run_id, verdict, note)
    finally:
        recorder.close()
    Console().print(f"recorded: {escape(grading_run_id)} {verdict}")
