"""`verifier review batch`: a batch of SWE-bench instances, with progress and a summary.

(`verifier review --instances ...` is the old spelling, deprecated: `verifier.cli.review` hands it here.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from verifier.cli.common import (
    EXIT_BUSY,
    ensure_image,
    fail,
    ray_option,
    review_limits,
    sandbox_failure,
    say_error,
    stderr,
)
from verifier.text import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from verifier.review.instances import Instance, Prediction
    from verifier.sandbox.admission import Admission
    from verifier.sandbox.backend import SandboxBackend

_STYLE = {"resolved": "green", "not_resolved": "red", "error": "yellow", "overloaded": "yellow"}


# Long only in its signature, as `review`'s: each option is declared with its help text there.
def batch(
    instances: Annotated[
        Path | None,
        typer.Option(
            "--instances",
            help="A file of SWE-bench instances (JSON list, object keyed by instance_id, or JSON lines: "
            "instance_id, repo as a local git repository or owner/name with --repos-dir, base_commit, patch, "
            "test_patch, FAIL_TO_PASS, PASS_TO_PASS).",
        ),
    ] = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions",
            help="A file of predictions (instance_id, model_patch, model_name_or_path): a JSON list, a JSON "
            "object keyed by instance_id, or JSON lines.",
        ),
    ] = None,
    gold: Annotated[bool, typer.Option("--gold", help="Review the instances' own patches (model 'gold').")] = False,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="The folder of the reports: per model and instance, and the summaries."),
    ] = None,
    repos_dir: Annotated[
        Path | None,
        typer.Option("--repos-dir", help="Each repo is owner/name, cloned as DIR/owner__name or DIR/owner/name."),
    ] = None,
    run_id: Annotated[
        str, typer.Option("--run-id", help="The run id of SWE-bench's report files (OUT/swebench/).")
    ] = "verifier",
    host_details: Annotated[
        bool, typer.Option("--host-details", help="Keep the clone's URI, the host name and host paths in the reports.")
    ] = False,
    max_workers: Annotated[int, typer.Option("--max-workers", min=1, max=32, help="Instances reviewed at once.")] = 2,
    force: Annotated[bool, typer.Option("--force", help="Review again instances that have a report.json.")] = False,
    timeout: Annotated[float, typer.Option(help="Wall-clock limit of each side's test run, seconds.")] = 900.0,
    memory: Annotated[str, typer.Option(help="Memory limit of each side's sandbox, e.g. 2g.")] = "2g",
    build: Annotated[bool, typer.Option(help="Build the sandbox image first when it is missing.")] = True,
    ray: Annotated[
        str | None,
        ray_option(
            "Run the instances' sandboxes on a Ray cluster (needs {hint}): its address, or auto for RAY_ADDRESS or "
            "the cluster started on this machine. Each node finds or builds the environments on its own engine; a "
            "job whose node dies is rerun on another node. See docs/review.md."
        ),
    ] = None,
) -> None:
    """Review each prediction of a batch of SWE-bench instances: base_commit + test_patch + model_patch,
    the instance's tests judging (FAIL_TO_PASS, PASS_TO_PASS).

    Needs --instances, --predictions (or --gold) and --out-dir. Per instance OUT/<model>/<instance_id>/
    (report.json, the patches, the test output), per model summary.json, and SWE-bench's own report
    files under OUT/swebench/. An instance with a report.json bound to the same inputs is not reviewed
    again (--force: all are).

    Exit 0: every instance resolved. Exit 1: some not resolved, or an error.
    Exit 2: bad input (a file, an option). Exit 3: some instances stayed overloaded (the machine was too
    busy to run them, after their retries); run the same command again to review only those.
    """
    run_batch_command(
        instances, predictions, gold, out_dir, max_workers, force, timeout, memory, build,
        repos_dir=repos_dir, run_id=run_id, host_details=host_details, ray=ray,
    )  # fmt: skip


#: Review jobs a Ray node takes at once beyond its one warm container (a review runs 2 to 4 jobs
#: side by side, each in a fresh container of its environment).
RAY_BACKLOG = 3


@contextmanager
def _backend(ray: str | None, build: bool) -> Iterator[SandboxBackend | None]:
    """None (this machine's engine), or a RayBackend on the cluster at `ray`, closed on the way out."""
    if ray is None:
        yield None
        return
    from verifier.cluster import RayBackend

    backend = RayBackend(address=ray, per_node=1, backlog=RAY_BACKLOG, build=build)
    try:
        yield backend
    finally:
        stats = backend.stats()
        backend.close()
        lost = "; ".join(f"{n.name}: {n.reason}" for n in stats.lost)
        stderr().print(
            f"ray: {len(stats.nodes)} live nodes, {stats.jobs} sandbox jobs, {stats.reruns} rerun on another "
            f"node after theirs was lost{escape(f' (lost: {lost})') if lost else ''}",
            soft_wrap=True,
        )


def run_batch_command(
    instances: Path | None,
    predictions: Path | None,
    gold: bool,
    out_dir: Path | None,
    max_workers: int,
    force: bool,
    timeout: float,
    memory: str,
    build: bool,
    *,
    repos_dir: Path | None = None,
    run_id: str = "verifier",
    host_details: bool = False,
    ray: str | None = None,
) -> None:
    """Check both files fully, then review every prediction; exit 0 only when all are resolved, 3 when
    some stayed overloaded (the run is not complete: the same command again reviews only those)."""
    from verifier.errors import SandboxUnavailable
    from verifier.review.batch import BatchRequest, InstanceReport, run_batch
    from verifier.review.instances import model_folder
    from verifier.sandbox.admission import Admission

    limits = review_limits(timeout, memory)
    found, preds, out_dir = _read_batch(instances, predictions, gold, out_dir, repos_dir, run_id)
    err = stderr()
    clones = {(i.repo_given, i.repo) for i in found.values()}
    for given, path in sorted(clones):
        err.print(f"repository {escape(given)}: {escape(path)}", soft_wrap=True)
    admission = Admission() if ray is None else None  # a Ray cluster's nodes queue on their own slots
    try:
        if build and ray is None:
            ensure_image()
        with _backend(ray, build) as backend, _progress(err, admission) as bar:
            task = bar.add_task("instances", total=len(preds))

            def done(rep: InstanceReport, reused: bool, n: int, total: int) -> None:
                # The reason whole: trusted words, bounded by their makers (three test names at most);
                # a progress line cut at 160 characters ended most verdicts in "[truncated]".
                how = "earlier report" if reused else f"{rep.duration_s:.0f} s"
                if rep.attempts > 1:
                    how += f", {rep.attempts} attempts"
                err.print(
                    f"[{n}/{total}] {escape(rep.model)} {escape(rep.instance_id)}: "
                    f"[{_STYLE[rep.status.value]}]{rep.status.value}[/] ({how}) {escape(one_line(rep.reason, 2000))}"
                )
                bar.update(task, completed=n)

            def stale(pred: Prediction, why: str) -> None:
                err.print(
                    f"{escape(pred.model_name_or_path)} {escape(pred.instance_id)}: reviewed again, "
                    f"the saved report does not count: {escape(one_line(why, 160))}"
                )

            summaries = run_batch(
                BatchRequest(instances=found, predictions=preds, out_dir=out_dir, max_workers=max_workers,
                             force=force, limits=limits, run_id=run_id, host_details=host_details,
                             backend=backend, admission=admission),
                on_done=done, on_stale=stale,
            )  # fmt: skip
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    for s in summaries:
        err.print(
            f"{escape(s.model)}: {s.resolved}/{s.total} resolved ({s.resolved_rate:.1%}), {s.not_resolved} not "
            f"resolved, {s.errors} errors, {s.overloaded} overloaded, {s.from_earlier_runs} from earlier runs; "
            f"summary {escape(str(out_dir / model_folder(s.model) / 'summary.json'))}",
            soft_wrap=True,
        )
    busy = sum(s.overloaded for s in summaries)
    if busy:
        say_error(
            f"{busy} instance(s) stayed overloaded after their retries (the machine was too busy to review them); "
            "they are not verdicts on the predictions: run the same command again to review only those"
        )
        raise typer.Exit(EXIT_BUSY)
    raise typer.Exit(0 if all(s.resolved == s.total for s in summaries) else 1)


def _progress(err: Console, admission: Admission | None) -> Progress:
    """The batch's progress line; with this machine's slots (one `Admission` for every sandbox job of
    the batch), also how many jobs wait for one now and how long they have waited in all."""
    from verifier.batch import SlotColumn

    return Progress(
        TextColumn("reviewing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), SlotColumn(admission),
        console=err, disable=not err.is_terminal,
    )  # fmt: skip


def _read_batch(
    instances: Path | None,
    predictions: Path | None,
    gold: bool,
    out_dir: Path | None,
    repos_dir: Path | None,
    run_id: str,
) -> tuple[dict[str, Instance], list[Prediction], Path]:
    """The options checked and both files read whole (one line naming the option, exit 2, for
    anything unusable): the instances, the predictions to review and the output folder."""
    from verifier.review.instances import BadRecord, gold_predictions, load_instances, load_predictions, safe_name

    if instances is None:
        raise fail("--instances is required: a file of SWE-bench instances", option="--instances")
    if (predictions is None) == (not gold):
        raise fail("--predictions (a file of predictions) or --gold is required, one of them", option="--predictions")
    if out_dir is None:
        raise fail("--out-dir is required: the folder for the reports and the summaries", option="--out-dir")
    if repos_dir is not None and not repos_dir.is_dir():
        raise fail(f"--repos-dir: {repos_dir} is not a folder", option="--repos-dir")
    try:
        safe_name(run_id)
    except ValueError as exc:
        raise fail(f"--run-id: {exc}", option="--run-id") from None
    try:
        found = load_instances(instances, repos_dir)
    except BadRecord as exc:
        raise fail(f"--instances: {exc}", option="--instances") from None
    try:
        preds = gold_predictions(found) if predictions is None else load_predictions(predictions, found)
    except BadRecord as exc:
        raise fail(f"--predictions: {exc}", option="--predictions") from None
    return found, preds, out_dir
