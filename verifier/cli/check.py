"""`verifier check`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from verifier.limits import DEFAULT_CALL_TIMEOUT_S, DEFAULT_TIMEOUT_S, Limits
from verifier.text import one_line

if TYPE_CHECKING:  # the models are imported where a check runs (start-up: see verifier/__init__)
    from verifier.evidence import Evidence


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
    runtime: Annotated[
        str,
        typer.Option(
            help="Container runtime: runc (the engine's own) or gvisor (gVisor's runsc: a user-space kernel "
            "between the candidate and the host's; slower). Recorded in the evidence."
        ),
    ] = "runc",
) -> None:
    """Verify CANDIDATE against the suite in a fresh sandbox.

    Exit 0: verified ok. 1: not ok, the candidate's fault (failed, error, timeout, oom, output_limit).
    2: bad input, or our sandbox failed. 3: the host was too busy to judge fairly; try again.
    """
    from verifier.errors import SandboxUnavailable
    from verifier.verify import Verifier

    out = Console()
    err = Console(stderr=True, soft_wrap=True)
    try:
        limits = Limits(
            timeout_s=timeout, call_timeout_s=call_timeout, memory_bytes=_parse_memory(memory), runtime=runtime
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        option = OPTION_OF.get(str(first["loc"][0]), str(first["loc"][0]))
        err.print(f"[red]error:[/] {option} {first.get('input')!r}: {escape(str(first['msg']))}")
        raise typer.Exit(2) from None
    verifier = Verifier(limits=limits)
    if build and candidate.is_file() and suite.is_dir():
        try:
            require_runtime(suite_limits(limits, suite))
            _ensure_image(err)
        except SandboxUnavailable as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from None
    with verifier:
        ev = verifier.check(candidate, suite)
    code = exit_code(ev)
    if code == EXIT_TROUBLE and not json_out:
        err.print(f"[red]error:[/] {escape(one_line(ev.reason, 500))}")
        raise typer.Exit(code)
    if json_out:
        print(ev.to_json())
    else:
        from verifier.cli import render

        render.evidence(out, ev, label=str(candidate))
    raise typer.Exit(code)


EXIT_OK, EXIT_NOT_OK, EXIT_TROUBLE, EXIT_BUSY = 0, 1, 2, 3
#: The options that set each limit, for error messages.
OPTION_OF = {
    "timeout_s": "--timeout",
    "call_timeout_s": "--call-timeout",
    "memory_bytes": "--memory",
    "runtime": "--runtime",
}


def exit_code(ev: Evidence) -> int:
    """0 verified ok; 1 the candidate failed; 2 bad input or our sandbox failed; 3 the host was too busy."""
    from verifier.evidence import Fault

    if ev.ok:
        return EXIT_OK
    if ev.fault is Fault.CANDIDATE:
        return EXIT_NOT_OK
    return EXIT_BUSY if ev.fault is Fault.HOST else EXIT_TROUBLE


def suite_limits(limits: Limits, suite: Path) -> Limits:
    """The limits a check of `suite` runs with (`Suite.limits`: the suite's [limits] over
    `limits`, the stronger runtime winning), or `limits` when the suite is unusable (the
    check's evidence then says why)."""
    from verifier.errors import InvalidInput
    from verifier.suite import load_suite

    try:
        return load_suite(suite).limits(limits)
    except (InvalidInput, ValueError):
        return limits


def require_runtime(limits: Limits) -> None:
    """Raise SandboxUnavailable, naming the command that installs it, when the engine lacks the
    runtime `limits` asks for (before anything is built or run)."""
    if limits.runtime == "runc":
        return
    from verifier.sandbox import runtime
    from verifier.sandbox.docker_engine import connect

    client = connect()
    try:
        runtime.require(client.api, limits)
    finally:
        client.close()


def _ensure_image(err: Console) -> None:
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    client = connect()
    if image.find_image(client) is None:
        with err.status("building the sandbox image (first run only)") as status:
            image.build(client, progress=lambda msg: status.update(msg))
