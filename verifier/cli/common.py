"""What every command shares, so the command line speaks with one voice.

- Failing: `fail` prints one red line on stderr that names the option and what it allows, and
  returns the `typer.Exit(2)` to raise. Under `--json` it also prints the error document on
  stdout, so a script always reads exactly one JSON document there (see `error_document`).
  Click's own usage errors (a missing option, `--timeout abc`, an unknown choice) take the same
  path: `Group.main` turns them into that one line instead of click's boxed usage text.
- Help: `Command` and `Group` show the allowed values of a choice (`<reuse|fresh|cold>`), no
  `<bool>` after a flag, and an argument by its upper-case name (`CANDIDATE`).
- The sandbox image and runtime checks every command makes before it runs anything
  (`ensure_image`, `require_runtime`, `suite_limits`), and `parse_size` for memory options.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from pydantic import ValidationError as PydanticError
from rich.console import Console
from rich.markup import escape

# typer 0.29 vendors click as typer._click (no click dependency any more): pyproject bounds typer below 0.30.
from typer._click import exceptions as click_errors
from typer._click.core import Command as ClickCommand
from typer._click.core import Context, Parameter
from typer._click.globals import get_current_context
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from verifier._distribution import install_hint
from verifier.text import one_line

if TYPE_CHECKING:
    from verifier.limits import Limits
    from verifier.sandbox.container import Client
    from verifier.suite import Suite

EXIT_OK, EXIT_NOT_OK, EXIT_TROUBLE, EXIT_BUSY = 0, 1, 2, 3
#: The option that sets each limit, for error messages.
OPTION_OF = {
    "timeout_s": "--timeout",
    "call_timeout_s": "--call-timeout",
    "memory_bytes": "--memory",
    "runtime": "--runtime",
}
#: An error document's status: the caller's input, or our sandbox (the engine, the image).
ErrorStatus = Literal["invalid_input", "infra_error"]
_FAULT_OF: dict[str, str] = {"invalid_input": "input", "infra_error": "verifier"}


def ray_option(help_text: str) -> Any:
    """`--ray ADDRESS`, said once for every command that can run on a Ray cluster: `help_text`
    says what runs there, with `{hint}` where the ray extra's install command goes."""
    return typer.Option("--ray", metavar="ADDRESS", help=escape(help_text.format(hint=install_hint("ray"))))


def stderr() -> Console:
    return Console(stderr=True, soft_wrap=True, highlight=False)


def error_document(message: str, *, option: str | None = None, status: ErrorStatus = "invalid_input") -> dict[str, Any]:
    """What `--json` prints on stdout when no evidence could be made (a bad option, the engine
    unreachable): the evidence's own `ok`, `status`, `fault` and `reason` keys, with `option`
    (the option at fault, or null) and `exit_code`; no `evidence_id`, since nothing ran."""
    return {
        "ok": False,
        "status": status,
        "fault": _FAULT_OF[status],
        "reason": message,
        "option": option,
        "exit_code": EXIT_TROUBLE,
    }


def _json_requested(ctx: Context | None, args: Sequence[str] = ()) -> bool:
    """Whether the running command was given its `--json` flag (`json_out` True; while the
    command line is still being parsed, `--json` among `args` of a command that has the flag)."""
    while ctx is not None:
        if ctx.params.get("json_out") is True:
            return True
        has_flag = any(isinstance(p, TyperOption) and p.is_flag and "--json" in p.opts for p in ctx.command.params)
        if has_flag and "--json" in args:
            return True
        ctx = ctx.parent
    return False


def fail(message: str, *, option: str | None = None, status: ErrorStatus = "invalid_input") -> typer.Exit:
    """One red line on stderr (and under `--json` the error document on stdout); raise the
    returned Exit(2). `message` should name the option and what it allows."""
    line = one_line(message, 500)
    if _json_requested(get_current_context(silent=True)):
        print(json.dumps(error_document(line, option=option, status=status)))
    say_error(line)
    return typer.Exit(EXIT_TROUBLE)


def say_error(message: str) -> None:
    """The one red error line on stderr, as every command prints it."""
    stderr().print(f"[red]error:[/] {escape(one_line(message, 500))}")


def limits_failure(exc: PydanticError) -> typer.Exit:
    """`fail` for limits that `Limits` refused, naming the option that set the first bad one."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    option = OPTION_OF.get(field, field)
    return fail(f"{option} {first.get('input')!r}: {_plain(str(first['msg']))}", option=option)


def _plain(detail: str) -> str:
    """pydantic's wording of what is allowed, as a clause after the option (`should be ...`)."""
    detail = detail.strip().rstrip(".").removeprefix("Value error, ")
    if detail.startswith("Input should be "):
        detail = "should be " + detail.removeprefix("Input should be ")
    return detail


def parse_size(text: str, option: str) -> int:
    """Bytes of a size such as 512m, 1g, 64k or 1048576; `fail` naming `option` otherwise."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise fail(f"{option} {text!r} is not a size: use a number of bytes or 512m, 1g, 64k", option=option) from None


def review_limits(timeout: float, memory: str) -> Limits:
    """The review's limits with --timeout and --memory; bad values: one line naming the option."""
    from verifier.review import REVIEW_LIMITS

    memory_bytes = parse_size(memory, "--memory")
    try:
        limits = REVIEW_LIMITS.model_copy(update={"timeout_s": timeout, "memory_bytes": memory_bytes})
        return type(limits).model_validate(limits.model_dump())
    except PydanticError as exc:
        raise limits_failure(exc) from None


def sandbox_failure(exc: Exception) -> typer.Exit:
    """`fail` for an engine, image or runtime we could not use (SandboxUnavailable)."""
    return fail(str(exc), status="infra_error")


# -- the sandbox every command needs -------------------------------------------------------------
def ensure_image(say: Callable[[str], None] | None = None, *, client: Client | None = None) -> str:
    """Build the sandbox image when it is missing (the first run only) and return its tag (the
    recipe hashed once: pass it on as the Verifier's `image`). Progress goes to `say`, or to a
    spinner on stderr. On `client`'s engine (the caller keeps it open), or on a connection of its
    own. Raises SandboxUnavailable when the engine cannot be reached."""
    from verifier.sandbox import image

    with _engine(client) as engine:
        digest = image.recipe_digest()
        tag = image.tag_of(digest)
        if image.find_image(engine, tag=tag) is not None:
            return tag
        if say is not None:
            return image.build(engine, progress=say, digest=digest)[0]
        with stderr().status("building the sandbox image (first run only)") as status:
            return image.build(engine, progress=lambda msg: status.update(escape(msg)), digest=digest)[0]


def require_runtime(limits: Limits, *, client: Client | None = None) -> None:
    """Raise SandboxUnavailable, naming the command that installs it, when the engine lacks the
    runtime `limits` asks for (before anything is built or run). On `client`'s engine, or on a
    connection of its own."""
    if limits.runtime == "runc":
        return
    from verifier.sandbox import runtime

    with _engine(client) as engine:
        runtime.require(engine.api, limits)


@contextmanager
def _engine(client: Client | None) -> Iterator[Client]:
    """`client`, or a connection of our own, closed on the way out."""
    if client is not None:
        yield client
        return
    from verifier.sandbox.docker_engine import connect

    own = connect()
    try:
        yield own
    finally:
        own.close()


def suite_limits(limits: Limits, suite: Path | Suite | None) -> Limits:
    """The limits a check of `suite` runs with (`Suite.limits`: the suite's [limits] over
    `limits`, the stronger runtime winning), or `limits` when the suite is unusable (the
    check's evidence then says why)."""
    loaded = suite if suite is None or not isinstance(suite, Path) else loaded_suite(suite)
    return limits if loaded is None else loaded.limits(limits)


def loaded_suite(suite: Path) -> Suite | None:
    """The suite folder read and validated once, for a command to hand on whole; None when it is
    unusable (the check that reads it again then says why, in its evidence)."""
    from verifier.errors import InvalidInput
    from verifier.suite import load_suite

    try:
        return load_suite(suite)
    except (InvalidInput, ValueError):
        return None


# -- click's help and usage errors in the same voice -----------------------------------------
def _quiet_flags(params: Sequence[Parameter]) -> None:
    """No `<bool>` after a flag in --help: a flag takes no value."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""


def usage_line(exc: click_errors.ClickException) -> tuple[str, str | None]:
    """A click error as one line that names the option (and what it allows), and the option."""
    param = getattr(exc, "param", None)
    option: str | None = None
    if isinstance(param, Parameter):
        option = param.opts[0] if isinstance(param, TyperOption) else (param.metavar or str(param.name).upper())
    if isinstance(exc, click_errors.MissingParameter) and option is not None:
        what = ""
        if isinstance(param, TyperOption | TyperArgument):
            help_text = getattr(param, "help", None) or ""
            what = f": {help_text.split('. ')[0].rstrip('.')}" if help_text else ""
        message = f"{option} is required{what}"
    elif isinstance(exc, click_errors.BadParameter) and option is not None:
        detail = _plain(exc.message)
        cause = exc.__cause__
        inputs = [e.get("input") for e in cause.errors()] if isinstance(cause, PydanticError) else []
        shown = f" {inputs[0]!r}" if inputs and isinstance(inputs[0], str) and repr(inputs[0]) not in detail else ""
        message = f"{option}{shown}: {detail}"
    else:
        message = exc.format_message().rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        message += f" (see {ctx.command_path} --help)"
    return one_line(message, 500), option


class _QuietFlags(ClickCommand):
    """What `Command` and `Group` share: no `<bool>` after a flag in their --help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _quiet_flags(self.params)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        if option is not None:
            _quiet_flags([option])
        return option


class Command(_QuietFlags, TyperCommand):
    """A command in the verifier's voice (see the module docstring)."""

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = (param.metavar or str(param.name)).upper() + ("..." if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


class Group(_QuietFlags, TyperGroup):
    """A command group in the verifier's voice; the root one prints every usage error as one line.

    A command may be named by two words (`review batch`): it is found before the one-word command
    of its first word, so `verifier review batch --help` is its own help and `verifier review REPO`
    stays the one-word command's."""

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, ClickCommand | None, list[str]]:
        if len(args) >= 2:
            name = f"{args[0]} {args[1]}"
            command = self.get_command(ctx, name)
            if command is not None:
                return name, command, args[2:]
        return super().resolve_command(ctx, args)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except click_errors.NoArgsIsHelpError:  # typer printed the help when it made this error
            sys.exit(EXIT_TROUBLE)
        except click_errors.ClickException as exc:
            line, option = usage_line(exc)
            if _json_requested(getattr(exc, "ctx", None), argv):
                print(json.dumps(error_document(line, option=option)))
            say_error(line)
            sys.exit(EXIT_TROUBLE)
        except typer.Abort:
            stderr().print("Aborted!")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)
