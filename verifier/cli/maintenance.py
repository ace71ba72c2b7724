"""`verifier image build|info`, `verifier gc`, `verifier schema`."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import typer
from rich.console import Console

image_app = typer.Typer(help="Build and describe the sandbox image.", no_args_is_help=True)


def _base(value: str) -> Literal["auto", "debootstrap", "registry"]:
    if value not in ("auto", "debootstrap", "registry"):
        raise _fail(f"--base must be auto, debootstrap or registry, not {value!r}")
    return value  # type: ignore[return-value]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {message}")
    return typer.Exit(2)


@image_app.command("build")
def image_build(
    base: Annotated[
        str,
        typer.Option(help="auto | debootstrap (offline, Debian hosts) | registry (python:3.11-slim)."),
    ] = "auto",
    force: Annotated[bool, typer.Option(help="Rebuild even when an image with this recipe digest exists.")] = False,
) -> None:
    """Build the sandbox image unless one with the current recipe digest exists."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    err = Console(stderr=True, soft_wrap=True)

    def progress(message: str) -> None:
        err.print(f"[dim]{message}[/]")

    try:
        tag, built = image.build(connect(), base=_base(base), force=force, progress=progress)
    except SandboxUnavailable as exc:
        raise _fail(str(exc)) from None
    Console().print(f"{'built' if built else 'up to date'}: {tag}")


@image_app.command("info")
def image_info(
    base: Annotated[str, typer.Option(help="auto | debootstrap | registry")] = "auto",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the sandbox image's id, recipe digest and Python/pytest/Hypothesis versions."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    try:
        info = image.info(connect(), base=_base(base))
    except SandboxUnavailable as exc:
        raise _fail(str(exc)) from None
    if json_out:
        print(json.dumps(info.as_dict(), indent=2))
        return
    for key, value in info.as_dict().items():
        Console().print(f"[bold]{key:>14}[/]  {value}")


def gc(
    all_: Annotated[
        bool,
        typer.Option("--all", help="Remove every verifier container, also those of live processes."),
    ] = False,
) -> None:
    """Remove sandbox containers left behind by a crashed verifier process."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.gc import collect

    try:
        removed = collect(connect(), everything=all_)
    except SandboxUnavailable as exc:
        raise _fail(str(exc)) from None
    Console().print(
        f"removed {len(removed)} container(s)" + (": " + ", ".join(c[:12] for c in removed) if removed else "")
    )


def schema() -> None:
    """Print the JSON schema of the evidence record."""
    from verifier.evidence import dumps_schema

    print(dumps_schema())
