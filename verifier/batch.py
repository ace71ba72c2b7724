"""Verify many candidates concurrently: bounded workers, a progress bar, and a sample whose run
failed for reasons not its own (our infrastructure: infra_error; a busy host: overloaded)
retried, then reported as such, never as the model's failure. Every evidence says how many
sandbox runs it took (`attempts`), so retries are never invisible. A busy host gets time: an
overloaded sample is tried again after a growing pause (bounded), and the progress line says how
many samples wait for a machine-wide slot and how long they have waited in all."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

from verifier.evidence import Evidence, Status
from verifier.inputs import Candidate
from verifier.sandbox.admission import Admission, default_workers
from verifier.suite import Suite
from verifier.verify import Verifier

Item = tuple[Path | Candidate | str | bytes, Path | str | Suite]
#: Statuses that say nothing about the candidate, so running it again is the fair thing to do.
RETRIED = (Status.INFRA_ERROR, Status.OVERLOADED)
#: An overloaded sample is tried this many more times, after pauses of BACKOFF_S, doubling (at
#: most BACKOFF_MAX_S): 2 + 4 + 8 s by default, time a busy host gets to free its slots.
OVERLOADED_RETRIES = 3
BACKOFF_S = 2.0
BACKOFF_MAX_S = 30.0


def check_retrying(
    verifier: Verifier,
    candidate: Path | Candidate | str | bytes,
    suite: Path | str | Suite,
    *,
    retries: int = 1,
    retried: tuple[Status, ...] = RETRIED,
    overloaded_retries: int | None = None,
    backoff_s: float | None = None,
    stop: threading.Event | None = None,
) -> Evidence:
    """`verifier.check`, run again while its status is one of `retried` (not the candidate's
    doing): up to `retries` more times at once for an infra_error, up to `overloaded_retries` more
    times for overloaded (`OVERLOADED_RETRIES` when None), each after a pause (`backoff_s`,
    `BACKOFF_S` when None, doubling; ended early by `stop`). The evidence's `attempts` counts every
    sandbox run it took."""
    ev = verifier.check(candidate, suite)
    runs = ev.attempts
    busy = OVERLOADED_RETRIES if overloaded_retries is None else overloaded_retries
    again = {Status.INFRA_ERROR: retries, Status.OVERLOADED: busy}
    pause = BACKOFF_S if backoff_s is None else backoff_s
    while ev.status in retried and again.get(ev.status, retries) > 0:
        again[ev.status] = again.get(ev.status, retries) - 1
        if ev.status is Status.OVERLOADED:
            if stop is not None and stop.wait(pause):
                break
            if stop is None:
                threading.Event().wait(pause)
            pause = min(pause * 2, BACKOFF_MAX_S)
        ev = verifier.check(candidate, suite)
        runs += ev.attempts
    return ev if runs == ev.attempts else ev.model_copy(update={"attempts": runs})


class SlotColumn(ProgressColumn):
    """The progress line's word on machine-wide slots, read live from the run's `Admission`:
    how many samples wait for one now and how long samples have waited in all (nothing while
    none has had to wait)."""

    def __init__(self, admission: Admission | None) -> None:
        super().__init__()
        self.admission = admission

    def render(self, task: Task) -> Text:
        if self.admission is None:
            return Text("")
        waiting, waited = self.admission.waiting, self.admission.waited_s
        if waiting == 0 and waited < 1.0:
            return Text("")
        return Text(f"{waiting} waiting for a machine slot, {waited:.0f} s waited", style="yellow")


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

    A sample whose run ended infra_error is run again up to `retries` times, one that ended
    overloaded up to `OVERLOADED_RETRIES` times after growing pauses (`check_retrying`); its
    evidence's `attempts` counts every sandbox run it took.
    """
    workers = workers or getattr(verifier.backend_if_made, "slots", None) or default_workers()
    results: list[Evidence | None] = [None] * len(items)

    stop = threading.Event()

    def one(index: int) -> Evidence:
        candidate, suite = items[index]
        return check_retrying(verifier, candidate, suite, retries=retries, stop=stop)

    admission = getattr(verifier.backend_if_made, "admission", None)
    bar = Progress(
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[retried]}"),
        SlotColumn(admission if isinstance(admission, Admission) else None),
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
            # the executor waits for the ones in flight only, not for the rest of the batch, and
            # end every pause before a retry.
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [r for r in results if r is not None]
