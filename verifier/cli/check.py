"""`verifier check`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from verifier.cli.common import (
    EXIT_BUSY,
    EXIT_NOT_OK,
    EXIT_OK,
    EXIT_TROUBLE,
    ensure_image,
    limits_failure,
    loaded_suite,
    parse_size,
    require_runtime,
    sandbox_failure,
    say_error,
    stderr,
    suite_limits,
)
from verifier.limits import DEFAULT_CALL_TIMEOUT_S, DEFAULT_TIMEOUT_S, Limits, Runtime

if TYPE_CHECKING:  # the models are imported where a check runs (start-up: see verifier/__init__)
    from verifier.evidence import Evidence
    from verifier.sandbox.container import Client

__all__ = ["check", "exit_code", "suite_limits"]

#: How --help words the charged clock (docs/architecture.md, "Time, load and fault").
CHARGED = "charged seconds: wall-clock time minus the time spent waiting for a CPU that other work on the machine held"


# A command's options are its signature: most of its length is their help text.
def check(
    candidate: Annotated[
        Path,
        typer.Argument(
            metavar="CANDIDATE",
            help="The candidate: a Python source file (the module the suite imports), a folder of modules, or "
            "a program (a program suite; .c .cpp .java .js .go .rs .sh: docs/programs.md).",
        ),
    ],
    suite: Annotated[Path, typer.Option("--suite", "-s", help="Folder of pytest files that `import solution`.")],
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the evidence as JSON instead of a summary; stdout then always holds one JSON document "
            "(an error document when no check could run).",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option(help=f"Limit of the whole run, in {CHARGED}.")] = DEFAULT_TIMEOUT_S,
    call_timeout: Annotated[
        float, typer.Option(help="Limit of one call into the candidate, in charged seconds.")
    ] = DEFAULT_CALL_TIMEOUT_S,
    memory: Annotated[str, typer.Option(help="Memory limit of the sandbox, e.g. 512m, 1g.")] = "512m",
    build: Annotated[bool, typer.Option(help="Build the sandbox image first when it is missing.")] = True,
    runtime: Annotated[
        Runtime,
        typer.Option(
            help="Container runtime: runc (the engine's own) or gvisor (gVisor's runsc: a user-space kernel "
            "between the candidate and the host's; slower). Recorded in the evidence."
        ),
    ] = "runc",
    language: Annotated[
        str | None,
        typer.Option(
            help="A program suite's language when neither the suite nor the candidate's extension names it: "
            "python, c, cpp, java, nodejs (javascript), go, rust, bash (docs/programs.md)."
        ),
    ] = None,
) -> None:
    """Verify CANDIDATE against the suite in a fresh sandbox.

    Exit 0: verified ok. 1: not ok, the candidate's fault (failed, error, timeout, oom, output_limit).
    2: bad input, or our sandbox failed. 3: the host was too busy to judge fairly; try again.
    """
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox.docker_engine import DockerBackend
    from verifier.verify import Verifier

    try:
        limits = Limits(
            timeout_s=timeout,
            call_timeout_s=call_timeout,
            memory_bytes=parse_size(memory, "--memory"),
            runtime=runtime,
        )
    except ValidationError as exc:
        raise limits_failure(exc) from None
    # One trip each: the suite is read once (and handed to the check whole), the engine connected
    # once (the image check, the runtime check and the run share it) and the recipe hashed once
    # (the tag `ensure_image` returns is the Verifier's image).
    loaded = loaded_suite(suite) if suite.is_dir() else None
    with _engine(connect=build and candidate.exists() and suite.is_dir()) as client:
        image: str | None = None
        # A file or a folder candidate alike; a missing one is left to the check, whose evidence
        # (invalid_input) says so without an engine.
        if client is not None:
            try:
                require_runtime(suite_limits(limits, loaded), client=client)
                image = ensure_image(client=client)
            except SandboxUnavailable as exc:
                raise sandbox_failure(exc) from None
        backend = None if client is None else DockerBackend(client)
        with Verifier(backend=backend, image=image, limits=limits) as verifier, _progress(shown=not json_out) as told:
            ev = verifier.check(candidate, loaded or suite, progress=told, language=language)
    code = exit_code(ev)
    if json_out:
        print(ev.to_json())
        raise typer.Exit(code)
    if code == EXIT_TROUBLE:
        say_error(ev.reason)
        raise typer.Exit(code)
    from verifier.cli import render

    render.evidence(Console(), ev, label=str(candidate))
    raise typer.Exit(code)


@contextmanager
def _engine(*, connect: bool) -> Iterator[Client | None]:
    """One connection to the engine for the whole command (None when it needs none yet: the
    check then connects only if it runs), closed on the way out. Raises a one-line exit 2 when
    the engine cannot be reached."""
    if not connect:
        yield None
        return
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox.docker_engine import connect as connect_engine

    try:
        client = connect_engine()
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    try:
        yield client
    finally:
        client.close()


@contextmanager
def _progress(*, shown: bool) -> Iterator[Callable[[int, int], None] | None]:
    """On a terminal (stderr), a line that says how far the run has come (tests done / total),
    gone when the run ends; elsewhere, and with --json, nothing at all."""
    err = stderr()
    if not shown or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("starting the sandbox", total=None)

        def told(done: int, total: int) -> None:
            bar.update(task, description="tests done", completed=done, total=total, refresh=True)

        yield told


def exit_code(ev: Evidence) -> int:
    """0 verified ok; 1 the candidate failed; 2 bad input or our sandbox failed; 3 the host was too busy."""
    from verifier.evidence import Fault

    if ev.ok:
        return EXIT_OK
    if ev.fault is Fault.CANDIDATE:
        return EXIT_NOT_OK
    return EXIT_BUSY if ev.fault is Fault.HOST else EXIT_TROUBLE
