"""`verifier check`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from verifier.evidence import Status
from verifier.limits import DEFAULT_CALL_TIMEOUT_S, DEFAULT_TIMEOUT_S, Limits


def _parse_memory(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a size such as 512m or 1g") from None


def check(
    candidate: Annotated[
        Path,
        typer.Argument(help="The candidate's Python source file (the module the suite imports)."),
    ],
    suite: Annotated[Path, typer.Option("--suite", "-s", help="Folder of pytest files that `import solution`.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the evidence as JSON instead of a summary.")] = False,
    timeout: Annotated[float, typer.Option(help="Wall-clock limit of the whole run, in seconds.")] = DEFAULT_TIMEOUT_S,
    call_timeout: Annotated[
        float, typer.Option(help="Limit of one call into the candidate, seconds.")
    ] = DEFAULT_CALL_TIMEOUT_S,
    memory: Annotated[str, typer.Option(help="Memory limit of the sandbox, e.g. 512m, 1g.")] = "512m",
    build: Annotated[bool, typer.Option(help="Build the sandbox image first when it is missing.")] = True,
) -> None:
    """Verify CANDIDATE against the suite in a fresh sandbox. Exit 0 ok, 1 not ok, 2 bad input / sandbox failure."""
    from verifier.errors import SandboxUnavailable
    from verifier.verify import Verifier

    out = Console()
    err = Console(stderr=True, soft_wrap=True)
    try:
        limits = Limits(timeout_s=timeout, call_timeout_s=call_timeout, memory_bytes=_parse_memory(memory))
    except ValueError as exc:
        err.print(f"[red]error:[/] invalid limits: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}")
        raise typer.Exit(2) from None
    verifier = Verifier(limits=limits)
    if build and candidate.is_file() and suite.is_dir():
        try:
            _ensure_image(err)
        except SandboxUnavailable as exc:
            err.print(f"[red]error:[/] {exc}")
            raise typer.Exit(2) from None
    with verifier:
        ev = verifier.check(candidate, suite)
    if ev.status in (Status.INVALID_INPUT, Status.INFRA_ERROR) and not json_out:
        err.print(f"[red]error:[/] {ev.reason}")
        raise typer.Exit(2)
    if json_out:
        print(ev.to_json())
    else:
        from verifier.cli import render

        render.evidence(out, ev, label=str(candidate))
    raise typer.Exit(0 if ev.ok else 2 if ev.status in (Status.INVALID_INPUT, Status.INFRA_ERROR) else 1)


def _ensure_image(err: Console) -> None:
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    client = connect()
    if image.find_image(client) is None:
        with err.status("building the sandbox image (first run only)") as status:
            image.build(client, progress=lambda msg: status.update(msg))
