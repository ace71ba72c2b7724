"""Verify many candidates concurrently: bounded workers, a progress bar, and an infra error
on one sample retried once, then reported as infra_error (never as a model failure)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from verifier.evidence import Evidence, Status
from verifier.suite import Suite
from verifier.verify import Verifier

Item = tuple[str | bytes | Path, Path | str | Suite]


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def verify_batch(
    verifier: Verifier,
    items: Sequence[Item],
    *,
    workers: int | None = None,
    retries: int = 1,
    progress: bool = True,
    on_result: Callable[[int, Evidence], None] | None = None,
) -> list[Evidence]:
    """Evidence for each (candidate, suite), in input order. A failing sample never stops the batch."""
    workers = workers or default_workers()
    results: list[Evidence | None] = [None] * len(items)

    def one(index: int) -> Evidence:
        candidate, suite = items[index]
        ev = verifier.check(candidate, suite)
        for _ in range(retries):
            if ev.status is not Status.INFRA_ERROR:
                break
            ev = verifier.check(candidate, suite)
        return ev

    bar = Progress(
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not progress,
        transient=False,
    )
    with bar, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify") as pool:
        task = bar.add_task("verify", total=len(items))
        futures = {pool.submit(one, i): i for i in range(len(items))}
        for future in as_completed(futures):
            index = futures[future]
            ev = future.result()
            results[index] = ev
            if on_result is not None:
                on_result(index, ev)
            bar.advance(task)
    return [r for r in results if r is not None]
