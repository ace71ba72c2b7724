"""`verifier image build|info`, `verifier gc`, `verifier schema`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from verifier.cli.common import Command, Group, fail, sandbox_failure, stderr

image_app = typer.Typer(cls=Group, help="Build and describe the sandbox image.", no_args_is_help=True)
#: Where the image's base comes from (`verifier.sandbox.image.build`).
Base = Literal["auto", "debootstrap", "registry"]


@image_app.command("build", cls=Command)
def image_build(
    base: Annotated[
        Base,
        typer.Option(help="auto, debootstrap (offline, Debian hosts) or registry (python:3.11-slim)."),
    ] = "auto",
    force: Annotated[bool, typer.Option(help="Rebuild even when an image with this recipe digest exists.")] = False,
    suite: Annotated[
        Path | None,
        typer.Option(
            help="Also prepare this suite's environment: its requirements (suite.toml or requirements.txt) "
            "resolved on the host and installed into an environment image, so its first check builds nothing."
        ),
    ] = None,
    languages: Annotated[
        bool,
        typer.Option(
            "--languages",
            help="Also build the language image (C, C++, Java, JavaScript, Go, Rust, Bash: docs/programs.md) "
            "unless one with its recipe digest exists; minutes the first time.",
        ),
    ] = False,
) -> None:
    """Build the sandbox image unless one with the current recipe digest exists (and, with
    --suite, the suite's environment image unless one with its digest exists; with --languages,
    the language image)."""
    from verifier.errors import InvalidInput, SandboxUnavailable
    from verifier.sandbox import environment, image
    from verifier.sandbox.docker_engine import DockerBackend, connect
    from verifier.suite import load_suite

    err = stderr()

    def progress(message: str) -> None:
        err.print(f"[dim]{message}[/]")

    try:
        loaded = load_suite(suite) if suite is not None else None
        spec = loaded.requirements if loaded is not None else None
    except InvalidInput as exc:
        raise fail(str(exc), option="--suite") from None
    try:
        client = connect()
        tag, built = image.build(client, base=base, force=force, progress=progress)
        Console().print(f"{'built' if built else 'up to date'}: {tag}")
        if languages:
            lang = image.language_image(client, "cpp", progress=progress)
            Console().print(f"language image: {lang.tag} ({lang.image_id[:19]})")
        if spec is None:
            return
        if not spec.requirements:
            Console().print(f"the suite {suite} declares no requirements: it runs on {tag}")
            return
        env = environment.ensure(DockerBackend(client), spec, tag, progress)
    except InvalidInput as exc:
        raise fail(str(exc), option="--suite") from None
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    Console().print(f"{'built' if env.built else 'up to date'}: {env.tag} ({environment.describe(env)})")


@image_app.command("info", cls=Command)
def image_info(
    base: Annotated[Base, typer.Option(help="The base the image was built from.")] = "auto",
    json_out: Annotated[
        bool, typer.Option("--json", help="Print JSON (an error document when the engine cannot be reached).")
    ] = False,
) -> None:
    """Print the sandbox image's id, recipe digest and Python/pytest/Hypothesis versions, and the
    language image's (C, C++, Java, JavaScript, Go, Rust, Bash) tag, id and toolchains, or that it
    is not built yet (`verifier image build --languages`)."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    try:
        client = connect()
        described = image.info(client, base=base).as_dict()
        described["language_image"] = image.language_info(client)
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    if json_out:
        print(json.dumps(described, indent=2))
        return
    languages = described.pop("language_image")
    for key, value in described.items():
        Console().print(f"[bold]{key:>14}[/]  {value}")
    if not languages["built"]:
        Console().print(f"[bold]{'languages':>14}[/]  {languages['tag']} not built (verifier image build --languages)")
        return
    Console().print(f"[bold]{'languages':>14}[/]  {languages['tag']} ({languages['image_id'][:19]})")
    for name, versions in languages["toolchains"].items():
        Console().print(f"[bold]{name:>14}[/]  {', '.join(versions)}")


def gc(
    all_: Annotated[
        bool,
        typer.Option("--all", help="Remove every verifier container, also those of live processes."),
    ] = False,
) -> None:
    """Remove sandbox containers left behind by a crashed verifier process, lasting agent
    sandboxes that stopped after their idle timeout, and workspace volumes no container uses."""
    from verifier.errors import SandboxUnavailable
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.gc import collect, collect_volumes

    try:
        client = connect()
        removed = collect(client, everything=all_)
        volumes = collect_volumes(client)
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    Console().print(
        f"removed {len(removed)} container(s)"
        + (": " + ", ".join(c[:12] for c in removed) if removed else "")
        + (f" and {len(volumes)} volume(s): " + ", ".join(volumes) if volumes else "")
    )


def schema() -> None:
    """Print the JSON schema of the evidence record."""
    from verifier.evidence import dumps_schema

    print(dumps_schema())
