"""Verify many candidates concurrently: bounded workers, a progress bar, and a sample whose run
failed for reasons not its own (our infrastructure: infra_error; a busy host: overloaded)
retried, then reported as such, never as the model's failure. Every evidence says how many
sandbox runs it took (`attempts`), so retries are never invisible. A busy host gets time: an
overloaded sample is tried again after a growing pause (bounded), and the progress line says how
many samples wait for a machine-wide slot and how long they have waited in all."""

from __future__ import annotations

import random
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
#: most BACKOFF_MAX_S): about 2 + 4 + 8 s by default, time a busy host gets to free its slots.
OVERLOADED_RETRIES = 3
BACKOFF_S = 2.0
BACKOFF_MAX_S = 30.0
#: Each pause is its nominal length times a random factor in [1 - JITTER, 1 + JITTER], so that
#: samples that ended overloaded together (one busy moment) do not all come back at once.
JITTER = 0.5


class Backoff:
    """The pauses before a job that ended overloaded (a busy host, not the candidate's doing) is
    tried again: at most `retries` of them (`OVERLOADED_RETRIES` when None), the first
    `first_s` long (`BACKOFF_S` when None), each next one twice the last (at most
    `BACKOFF_MAX_S`), each drawn at random within `JITTER` of its length (`rand`: a number in
    [0, 1), `random.random` when None). `stop` ends a pause, and every retry after it, at once
    (Ctrl-C).

    The one home of this rule: `check_retrying` (bench humaneval, bench io, `verify_batch`) and
    the instance batches of `verifier review batch` use it."""

    def __init__(
        self,
        retries: int | None = None,
        first_s: float | None = None,
        stop: threading.Event | None = None,
        rand: Callable[[], float] | None = None,
    ) -> None:
        self.left = OVERLOADED_RETRIES if retries is None else retries
        self.pause = BACKOFF_S if first_s is None else first_s
        self.stop = stop
        self.rand = rand or random.random
        #: The pauses waited so far (seconds, as drawn).
        self.waited: list[float] = []

    def next_pause(self) -> float:
        """The next pause as drawn: its nominal length within JITTER of it."""
        return self.pause * (1 - JITTER + 2 * JITTER * self.rand())

    def wait(self) -> bool:
        """Pause before the next try and say True; False (at once) when the retries are spent, or
        when `stop` is set (before or during the pause)."""
        if self.left <= 0 or (self.stop is not None and self.stop.is_set()):
            return False
        self.left -= 1
        pause = self.next_pause()
        self.waited.append(pause)
        if self.stop is not None:
            if self.stop.wait(pause):
                return False
        else:
            threading.Event().wait(pause)
        self.pause = min(self.pause * 2, BACKOFF_MAX_S)
        return True


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
    doing): up to `retries` more times at once for an infra_error, and for overloaded as often
    and after the pauses `Backoff(overloaded_retries, backoff_s, stop)` allows. The evidence's
    `attempts` counts every sandbox run it took."""
    ev = verifier.check(candidate, suite)
    runs = ev.attempts
    busy = Backoff(overloaded_retries, backoff_s, stop)
    again: dict[Status, int] = {}
    while ev.status in retried:
        if ev.status is Status.OVERLOADED:
            if not busy.wait():
                break
        else:
            left = again.get(ev.status, retries)
            if left <= 0:
                break
            again[ev.status] = left - 1
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
    overloaded_retries: int | None = None,
    backoff_s: float | None = None,
) -> list[Evidence]:
    """Evidence for each (candidate, suite), in input order. A failing sample never stops the batch.

    A sample whose run ended infra_error is run again up to `retries` times, one that ended
    overloaded up to `overloaded_retries` times (`OVERLOADED_RETRIES` when None) after growing
    pauses, the first `backoff_s` long (`check_retrying`, `Backoff`); its evidence's `attempts`
    counts every sandbox run it took.
    """
    workers = workers or getattr(verifier.backend_if_made, "slots", None) or default_workers()
    results: list[Evidence | None] = [None] * len(items)

    stop = threading.Event()

    def one(index: int) -> Evidence:
        candidate, suite = items[index]
        return check_retrying(
            verifier,
            candidate,
            suite,
            retries=retries,
            overloaded_retries=overloaded_retries,
            backoff_s=backoff_s,
            stop=stop,
        )

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
