"""Verify many candidates concurrently: bounded workers, a progress bar, and a sample whose run
failed for reasons not its own (our infrastructure: infra_error; a busy host: overloaded)
retried, then reported as such, never as the model's failure. Every evidence says how many
sandbox runs it took (`attempts`), so retries are never invisible."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.sandbox.admission import default_workers
from verifier.suite import Suite
from verifier.verify import Verifier

Item = tuple[Path | Candidate | str | bytes, Path | str | Suite]
#: Statuses that say nothing about the candidate, so running it again is the fair thing to do.
RETRIED = (Status.INFRA_ERROR, Status.OVERLOADED)


def check_retrying(
    verifier: Verifier,
    candidate: Path | Candidate | str | bytes,
    suite: Path | str | Suite,
    *,
    retries: int = 1,
    retried: tuple[Status, ...] = RETRIED,
) -> Evidence:
    """`verifier.check`, run again up to `retries` times while its status is one of `retried`
    (not the candidate's doing); the evidence's `attempts` counts every sandbox run it took."""
    ev = verifier.check(candidate, suite)
    runs = ev.attempts
    for _ in range(retries):
        if ev.status not in retried:
            break
        ev = verifier.check(candidate, suite)
        runs += ev.attempts
    return ev if runs == ev.attempts else ev.model_copy(update={"attempts": runs})


def verify_batch(
    verifier: Verifier,
    items: Sequence[Item],
    *,
    workers: int | None = None,
    retries: int = 1,
    progress: bool = True,
    on_result: Callable[[int, Evidence], None] | None = None,
) -> list[Evidence]:
    """Evidence for each (candidate, suite), in input order. A failing sample never stops the batch.

    A sample whose run ended infra_error or overloaded is run again up to `retries` times; its
    evidence's `attempts` counts every sandbox run it took.
    """
    workers = workers or getattr(verifier.backend_if_made, "slots", None) or default_workers()
    results: list[Evidence | None] = [None] * len(items)

    def one(index: int) -> Evidence:
        candidate, suite = items[index]
        return check_retrying(verifier, candidate, suite, retries=retries)

    bar = Progress(
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[retried]}"),
        disable=not progress,
        transient=False,
        console=Console(stderr=True),  # stdout is the caller's (the bench commands print their summary there)
    )
    retried = 0
    with bar, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify") as pool:
        task = bar.add_task("verify", total=len(items), retried="")
        futures = {pool.submit(one, i): i for i in range(len(items))}
        try:
            for future in as_completed(futures):
                index = futures[future]
                ev = future.result()
                results[index] = ev
                retried += ev.attempts > 1
                if on_result is not None:
                    on_result(index, ev)
                bar.update(task, advance=1, retried=f"{retried} rerun" if retried else "")
        except BaseException:
            # Ctrl-C (or a failing on_result): drop the samples not started yet, so that leaving
            # the executor waits for the ones in flight only, not for the rest of the batch.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [r for r in results if r is not None]
