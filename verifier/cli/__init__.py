"""The `verifier` command line. Thin: parse, call the API, render, exit 0/1/2/3.

Every command fails the same way (`verifier.cli.common`): one line naming the option and what it
allows, exit 2; with `--json`, stdout always holds one JSON document."""

from __future__ import annotations

from typing import Annotated

import typer

from verifier._distribution import __version__
from verifier.cli import bench as _bench
from verifier.cli import check as _check
from verifier.cli import maintenance as _maintenance
from verifier.cli import review as _review
from verifier.cli import review_batch as _review_batch
from verifier.cli import runs as _runs
from verifier.cli import serve as _serve
from verifier.cli.common import Command, Group

app = typer.Typer(
    name="verifier",
    cls=Group,
    help=(
        "Verify model-written code against trusted pytest + Hypothesis suites in a locked-down "
        "Docker sandbox, and print content-bound evidence.\n\n"
        "Exit codes: 0 verified ok, 1 not ok (the candidate failed), 2 bad input or the sandbox failed, "
        "3 the host was too busy to judge (try again)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        print(f"verifier {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    """The command group; subcommands below."""


app.command("check", cls=Command)(_check.check)
app.command("schema", cls=Command)(_maintenance.schema)
app.command("gc", cls=Command)(_maintenance.gc)
app.add_typer(_maintenance.image_app, name="image")
app.add_typer(_runs.runs_app, name="runs")
app.add_typer(_bench.bench_app, name="bench")
app.command("review", cls=Command)(_review.review)
# Two words: the root group resolves `review batch` before `review` (`Group.resolve_command`).
app.command("review batch", cls=Command)(_review_batch.batch)
app.command("serve", cls=Command)(_serve.serve)


def main() -> None:
    app()
