"""The `verifier` command line. Thin: parse, call the API, render, exit 0/1/2."""

from __future__ import annotations

import typer

from verifier.cli import bench as _bench
from verifier.cli import check as _check
from verifier.cli import maintenance as _maintenance
from verifier.cli import runs as _runs

app = typer.Typer(
    name="verifier",
    help=(
        "Verify model-written code against trusted pytest + Hypothesis suites in a locked-down "
        "Docker sandbox, and print content-bound evidence.\n\n"
        "Exit codes: 0 verified ok, 1 not ok (the candidate failed), 2 bad input or the sandbox failed."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("check")(_check.check)
app.command("schema")(_maintenance.schema)
app.command("gc")(_maintenance.gc)
app.add_typer(_maintenance.image_app, name="image")
app.add_typer(_runs.runs_app, name="runs")
app.add_typer(_bench.bench_app, name="bench")
app.command("review")(__import__("verifier.cli.review", fromlist=["review"]).review)


def main() -> None:
    app()
