"""`verifier review --instances`: a batch of SWE-bench instances, with progress and a summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from verifier.cli.common import ensure_image, fail, review_limits, sandbox_failure, stderr
from verifier.text import one_line

if TYPE_CHECKING:
    from verifier.review.instances import Instance, Prediction

_STYLE = {"resolved": "green", "not_resolved": "red", "error": "yellow"}


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
) -> None:
    """Check both files fully, then review every prediction; exit 0 only when all are resolved."""
    from verifier.errors import SandboxUnavailable
    from verifier.review.batch import BatchRequest, InstanceReport, run_batch
    from verifier.review.instances import model_folder

    limits = review_limits(timeout, memory)
    found, preds, out_dir = _read_batch(instances, predictions, gold, out_dir, repos_dir, run_id)
    err = stderr()
    clones = {(i.repo_given, i.repo) for i in found.values()}
    for given, path in sorted(clones):
        err.print(f"repository {escape(given)}: {escape(path)}", soft_wrap=True)
    try:
        if build:
            ensure_image()
        with Progress(
            TextColumn("reviewing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err, disable=not err.is_terminal,
        ) as bar:  # fmt: skip
            task = bar.add_task("instances", total=len(preds))

            def done(rep: InstanceReport, reused: bool, n: int, total: int) -> None:
                # The reason whole: trusted words, bounded by their makers (three test names at most);
                # a progress line cut at 160 characters ended most verdicts in "[truncated]".
                how = "earlier report" if reused else f"{rep.duration_s:.0f} s"
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
                             force=force, limits=limits, run_id=run_id, host_details=host_details),
                on_done=done, on_stale=stale,
            )  # fmt: skip
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    for s in summaries:
        err.print(
            f"{escape(s.model)}: {s.resolved}/{s.total} resolved ({s.resolved_rate:.1%}), {s.not_resolved} not "
            f"resolved, {s.errors} errors, {s.from_earlier_runs} from earlier runs; "
            f"summary {escape(str(out_dir / model_folder(s.model) / 'summary.json'))}",
            soft_wrap=True,
        )
    raise typer.Exit(0 if all(s.resolved == s.total for s in summaries) else 1)


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
        raise fail("--predictions and --gold need --instances (a JSONL file of instances)", option="--instances")
    if (predictions is None) == (not gold):
        raise fail("--instances needs --predictions (a JSONL file) or --gold, one of them", option="--predictions")
    if out_dir is None:
        raise fail("--instances needs --out-dir: the folder for the logs and the summary", option="--out-dir")
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
