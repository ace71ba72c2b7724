"""What a progress line reads from `Admission` (issue 37 §4): how many jobs wait for a
machine-wide slot now, and how long jobs have waited in all; and the pause before an overloaded
sample's retry, which Ctrl-C ends at once. No timing is asserted beyond "some wait happened"."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from rich.console import Console

from verifier import batch
from verifier.batch import SlotColumn, check_retrying
from verifier.evidence import Status
from verifier.sandbox.admission import Admission


def test_waiting_and_waited_count_the_jobs_at_the_door(tmp_path: Path) -> None:
    admission = Admission(1, wait_s=60, folder=tmp_path)
    got = threading.Event()
    with admission.slot():
        assert (admission.waiting, admission.waited_s >= 0) == (0, True)

        def second() -> None:
            with admission.slot():
                got.set()

        waiter = threading.Thread(target=second)
        waiter.start()
        for _ in range(600):  # until the second job is counted at the door (bounded: 60 s)
            if admission.waiting == 1:
                break
            threading.Event().wait(0.1)
        assert admission.waiting == 1
        column = SlotColumn(admission).render(None)  # type: ignore[arg-type]
        assert "1 waiting for a machine slot" in column.plain
        # The wait still going on counts already (before, it counted only once it ended, so a run
        # held up for minutes said "0 s waited" all along).
        before = admission.waited_s
        threading.Event().wait(0.05)
        assert admission.waiting == 1 and admission.waited_s > before > 0
    waiter.join(60)
    assert got.is_set() and admission.waiting == 0 and admission.waited_s > 0


def test_the_column_says_nothing_while_nobody_waits(tmp_path: Path) -> None:
    assert SlotColumn(Admission(1, folder=tmp_path)).render(None).plain == ""  # type: ignore[arg-type]
    assert SlotColumn(None).render(None).plain == ""  # type: ignore[arg-type]
    Console().print(SlotColumn(None).render(None))  # type: ignore[arg-type]


class _Busy:
    """A verifier whose every check ends overloaded (our own retry logic under test)."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, candidate: object, suite: object) -> object:
        from verifier.evidence import Evidence

        self.calls += 1
        return Evidence.model_construct(status=Status.OVERLOADED, attempts=1)


def test_a_stop_ends_the_pause_before_a_retry() -> None:
    busy = _Busy()
    stop = threading.Event()
    stop.set()  # Ctrl-C already came: no pause is waited out, no retry starts
    check_retrying(busy, "x", "y", backoff_s=3600, stop=stop)  # type: ignore[arg-type]
    assert busy.calls == 1


def test_overloaded_runs_are_retried_a_bounded_number_of_times() -> None:
    busy = _Busy()
    ev = check_retrying(busy, "x", "y", backoff_s=0)  # type: ignore[arg-type]
    assert busy.calls == 1 + batch.OVERLOADED_RETRIES and ev.attempts == busy.calls


def test_the_pauses_double_within_their_jitter_and_stop_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "BACKOFF_MAX_S", 0.004)
    low = batch.Backoff(retries=4, first_s=0.001, rand=lambda: 0.0)
    assert [low.wait() for _ in range(5)] == [True, True, True, True, False]  # bounded: 4 retries
    assert low.waited == pytest.approx([0.0005, 0.001, 0.002, 0.002])  # half of 1, 2, 4, 4 (the cap) ms
    high = batch.Backoff(retries=2, first_s=0.001, rand=lambda: 1.0)
    assert high.wait() and high.wait() and not high.wait()
    assert high.waited == pytest.approx([0.0015, 0.003])  # one and a half times each
    drawn = batch.Backoff(first_s=2.0)  # the default draw: within half of the nominal length
    assert all(1.0 <= drawn.next_pause() <= 3.0 for _ in range(200))
    assert len({drawn.next_pause() for _ in range(20)}) > 1  # drawn, not fixed


def test_verify_batch_passes_its_retry_bound_on() -> None:
    busy = _Busy()
    busy.backend_if_made = None  # type: ignore[attr-defined]
    (ev,) = batch.verify_batch(busy, [("x", "y")], workers=1, progress=False, overloaded_retries=1, backoff_s=0)  # type: ignore[arg-type]
    assert busy.calls == 2 and ev.attempts == 2 and ev.status is Status.OVERLOADED
