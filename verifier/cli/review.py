"""`verifier review`: a repository's own tests on both sides of a change, in the sandbox."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from verifier.cli.common import EXIT_BUSY, ensure_image, fail, review_limits, sandbox_failure, say_error, stderr
from verifier.text import one_line


class ReportFormat(StrEnum):
    """The report formats (`verifier.review.reports.FORMATS`); an Enum, since typer takes a
    repeated option's choices only from one."""

    MARKDOWN = "markdown"
    JSON = "json"
    JUNIT = "junit"
    SARIF = "sarif"


# Long only in its signature: each option is declared with its help text there (typer reads the
# signature); the body parses, calls verifier.review and renders.
def review(
    repo: Annotated[
        Path | None, typer.Argument(help="The git repository (its working tree, index and refs are only read).")
    ] = None,
    base: Annotated[str | None, typer.Option("--base", help="The ref the change starts from, e.g. main.")] = None,
    head: Annotated[
        str | None, typer.Option("--head", help="The ref of the change (default HEAD); not with --patch.")
    ] = None,
    patch: Annotated[
        Path | None, typer.Option("--patch", help="A unified diff to apply on --base instead of --head.")
    ] = None,
    tests: Annotated[
        Literal["head", "base"],
        typer.Option(
            "--tests",
            help="head: the head's tests judge both sides (tests the change adds can show as fixed). "
            "base: the base's tests (+ test files the change adds), so the change cannot rewrite its judge.",
        ),
    ] = "head",
    requirements: Annotated[
        Path | None,
        typer.Option("--requirements", help="A requirements file to install instead of what the trees declare."),
    ] = None,
    test_path: Annotated[
        list[str] | None,
        typer.Option(
            "--test-path",
            help="A file or folder (relative to the repository root) that is tests, given to pytest as its path; "
            "repeat it for several. For tests pytest's configuration does not name, e.g. a test.py run by unittest.",
        ),
    ] = None,
    pytest_args: Annotated[
        str,
        typer.Option(
            "--pytest-args",
            help="Extra pytest options for both sides, e.g. \"-k 'not slow' -W error\": selection, warning and "
            "reporting options only (-p, -c, -x, --pyargs and the like are refused; see docs/review.md).",
        ),
    ] = "",
    expect: Annotated[
        Path | None,
        typer.Option(
            "--expect",
            help="An instance spec: a JSON file with FAIL_TO_PASS and PASS_TO_PASS (pytest node ids), or a "
            "SWE-bench instance record. ok then means resolved: every FAIL_TO_PASS test fails (or is absent) on "
            "the base and passes on the head, every PASS_TO_PASS test passes on the head.",
        ),
    ] = None,
    # The batch's options of the old spelling (`verifier review --instances ...`, deprecated: it
    # is `verifier review batch` now), hidden from this help and kept working for a release.
    instances: Annotated[Path | None, typer.Option("--instances", hidden=True)] = None,
    predictions: Annotated[Path | None, typer.Option("--predictions", hidden=True)] = None,
    repos_dir: Annotated[Path | None, typer.Option("--repos-dir", hidden=True)] = None,
    run_id: Annotated[str, typer.Option("--run-id", hidden=True)] = "verifier",
    host_details: Annotated[bool, typer.Option("--host-details", hidden=True)] = False,
    gold: Annotated[bool, typer.Option("--gold", hidden=True)] = False,
    max_workers: Annotated[int, typer.Option("--max-workers", min=1, max=32, hidden=True)] = 2,
    force: Annotated[bool, typer.Option("--force", hidden=True)] = False,
    formats: Annotated[
        list[ReportFormat] | None,
        typer.Option(
            "--format", "-f", help="The report's format (default markdown); repeat it with --out-dir for several."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="Write review.md / review.json / review.junit.xml / review.sarif here."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Wall-clock limit of each side's test run, seconds.")] = 900.0,
    memory: Annotated[str, typer.Option(help="Memory limit of each side's sandbox, e.g. 2g.")] = "2g",
    build: Annotated[bool, typer.Option(help="Build the sandbox image first when it is missing.")] = True,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON schema of the review evidence and exit.")
    ] = False,
) -> None:
    """Run the repository's tests on --base and on the change in two sandboxes; report what it fixed and broke.

    Exit 0: no regression (with --expect: resolved). Exit 1: regressions, new failures, or a run that did not complete.

    With --expect, exit 1 also when not resolved.

    Exit 2: bad input (not a repository, unknown ref, a patch that does not apply, no tests,
    dependencies that cannot be resolved) or the sandbox failed. Exit 3: the machine was too busy (try again).

    Each test is fixed, broken, still passing, still failing, added, removed, flaky, error or missing;
    the evidence names the git tree ids it ran (verifier review --schema).

    A batch of SWE-bench instances and predictions: verifier review batch --help.
    """
    err = stderr()
    if schema:
        from verifier.review.review_evidence import dumps_review_schema

        print(dumps_review_schema())
        raise typer.Exit(0)
    if instances is not None or predictions is not None or gold or repos_dir is not None:
        err.print("note: `verifier review --instances` is deprecated: use `verifier review batch` (same options)")
        single = {"REPO": repo, "--base": base, "--head": head, "--patch": patch, "--expect": expect}
        for option, value in single.items():
            if value is not None:
                raise fail(f"{option}: not with --instances (each instance names its own)", option=option)
        from verifier.cli.review_batch import run_batch_command

        run_batch_command(
            instances, predictions, gold, out_dir, max_workers, force, timeout, memory, build,
            repos_dir=repos_dir, run_id=run_id, host_details=host_details,
        )  # fmt: skip
    chosen = [f.value for f in formats] if formats else ["markdown"]
    if len(set(chosen)) > 1 and out_dir is None:
        raise fail("--format: several formats need --out-dir", option="--format")
    if repo is None:
        raise fail("REPO is required: the git repository to review (see verifier review --help)", option="REPO")
    if base is None:
        raise fail("--base is required: the ref the change starts from, e.g. main", option="--base")
    if patch is not None and head is not None:
        raise fail("--head and --patch: give one of them, not both", option="--patch")

    from verifier.errors import HostOverloaded, InvalidInput, SandboxUnavailable
    from verifier.review import ReviewRequest, pytest_options
    from verifier.review import review as run_review
    from verifier.review.reports import FILENAMES, FORMATS, render

    try:
        extra_args = pytest_options.parse(pytest_args)
    except InvalidInput as exc:
        raise fail(str(exc), option="--pytest-args") from None

    spec = None
    if expect is not None:
        from verifier.review.instances import load_spec

        try:
            spec = load_spec(expect)
        except InvalidInput as exc:
            raise fail(f"--expect: {exc}", option="--expect") from None
    request = ReviewRequest(
        repo=repo, base=base, head=head, patch=patch, tests=tests,
        requirements=requirements, test_paths=tuple(test_path or ()), pytest_args=extra_args,
        limits=review_limits(timeout, memory), expect=spec,
    )  # fmt: skip
    try:
        with err.status("reviewing") as status:
            if build:
                ensure_image(lambda msg: status.update(escape(msg)))
            ev = run_review(request, progress=lambda msg: status.update(escape(msg)))
    except InvalidInput as exc:
        raise fail(str(exc)) from None
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    except HostOverloaded as exc:  # no verdict: the machine's doing, not the change's
        say_error(f"the machine was too busy to review the change (try again): {exc}")
        raise typer.Exit(EXIT_BUSY) from None
    wanted = [f for f in FORMATS if f in chosen]
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for fmt in wanted:
            (out_dir / FILENAMES[fmt]).write_text(render(fmt, ev), encoding="utf-8")
        err.print(f"wrote {', '.join(FILENAMES[f] for f in wanted)} to {escape(str(out_dir))}")
    else:
        print(render(wanted[0], ev), end="")
    style = "bold green" if ev.ok else "bold red"
    verdict = "OK" if ev.ok else "NOT OK"
    err.print(f"[{style}]{verdict}[/] {escape(one_line(ev.reason, 300))}  review {ev.review_id[:16]}")
    raise typer.Exit(0 if ev.ok else 1)
