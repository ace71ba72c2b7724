"""`verifier.serve.dispatch.Dispatch`, our own scheduling logic, with plain callables (no server,
no engine): width, arrival order, the hand-over on the worker's thread, deadlines, cancelled
callers, failing jobs and close. Each job's `ended` is counted: exactly once, always."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from verifier.serve.dispatch import Dispatch

WAIT_S = 30.0  # a bound for events that happen at once; never reached when the code is right


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(max_workers=16)
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class Jobs:
    """Jobs that record when they start, on which thread, and wait until released."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list[str] = []
        self.threads: dict[str, int] = {}
        self.release: dict[str, threading.Event] = {}
        self.running = 0
        self.most = 0
        self.ended: Counter[str] = Counter()

    def job(self, name: str, value: object = None, error: BaseException | None = None) -> Callable[[], object]:
        self.release[name] = threading.Event()

        def work() -> object:
            with self.lock:
                self.started.append(name)
                self.threads[name] = threading.get_ident()
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                assert self.release[name].wait(WAIT_S)
            finally:
                with self.lock:
                    self.running -= 1
            if error is not None:
                raise error
            return value if value is not None else name

        return work

    def end(self, name: str) -> Callable[[], None]:
        return lambda: self.ended.update([name])

    def wait_started(self, name: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while name not in self.started:
            assert time.monotonic() < deadline, f"{name} never started"
            time.sleep(0.001)


def far() -> float:
    return time.monotonic() + 3600


def test_at_most_width_run_and_the_rest_start_in_arrival_order(executor: ThreadPoolExecutor) -> None:
    jobs = Jobs()
    names = [f"j{i}" for i in range(7)]

    async def main() -> list[object]:
        dispatch: Dispatch[object] = Dispatch(2, executor)
        calls = []
        for name in names:
            calls.append(asyncio.create_task(dispatch.run(jobs.job(name), far(), jobs.end(name))))
            await asyncio.sleep(0)  # arrival order is the order of the calls
        for name in names:  # release each job once it runs, in order
            await asyncio.to_thread(jobs.wait_started, name)
            jobs.release[name].set()
        return list(await asyncio.gather(*calls))

    assert asyncio.run(main()) == names
    assert jobs.started == names
    assert jobs.most == 2
    assert jobs.ended == Counter(names)


def test_the_next_job_starts_on_the_ending_workers_thread_without_the_loop(executor: ThreadPoolExecutor) -> None:
    """The loop is blocked while the first job ends: the second must start all the same, on the
    first one's thread (with a semaphore on the loop it could not start until the loop ran)."""
    jobs = Jobs()

    async def main() -> tuple[object, object]:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        first = asyncio.create_task(dispatch.run(jobs.job("a"), far(), jobs.end("a")))
        second = asyncio.create_task(dispatch.run(jobs.job("b"), far(), jobs.end("b")))
        await asyncio.sleep(0)
        await asyncio.to_thread(jobs.wait_started, "a")
        jobs.release["a"].set()
        jobs.wait_started("b")  # blocks the loop's own thread on purpose
        jobs.release["b"].set()
        return await first, await second

    assert asyncio.run(main()) == ("a", "b")
    assert jobs.threads["a"] == jobs.threads["b"]
    assert jobs.ended == Counter(["a", "b"])


def test_a_job_that_cannot_start_before_its_deadline_never_runs(executor: ThreadPoolExecutor) -> None:
    jobs = Jobs()

    async def main() -> tuple[object, object, float]:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        busy = asyncio.create_task(dispatch.run(jobs.job("busy"), far(), jobs.end("busy")))
        await asyncio.to_thread(jobs.wait_started, "busy")
        began = time.monotonic()
        late = await dispatch.run(jobs.job("late"), time.monotonic() + 0.2, jobs.end("late"))
        waited = time.monotonic() - began
        assert dispatch.queued == 0
        jobs.release["busy"].set()
        return await busy, late, waited

    busy, late, waited = asyncio.run(main())
    assert (busy, late) == ("busy", None)
    assert waited >= 0.2  # answered at its deadline, not before; the busy job never ended meanwhile
    assert jobs.started == ["busy"]
    assert jobs.ended == Counter(["busy", "late"])


def test_a_waiting_job_past_its_deadline_is_skipped_by_the_worker(executor: ThreadPoolExecutor) -> None:
    """The worker that ends a job finds the next one's deadline passed (the loop is blocked, so
    its timer could not fire): it starts the one after it instead."""
    jobs = Jobs()

    async def main() -> list[object]:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        first = asyncio.create_task(dispatch.run(jobs.job("a"), far(), jobs.end("a")))
        late = asyncio.create_task(dispatch.run(jobs.job("late"), time.monotonic() + 0.05, jobs.end("late")))
        last = asyncio.create_task(dispatch.run(jobs.job("c"), far(), jobs.end("c")))
        await asyncio.sleep(0)
        await asyncio.to_thread(jobs.wait_started, "a")
        time.sleep(0.1)  # the loop is blocked past late's deadline
        jobs.release["a"].set()
        jobs.wait_started("c")
        jobs.release["c"].set()
        return list(await asyncio.gather(first, late, last))

    assert asyncio.run(main()) == ["a", None, "c"]
    assert jobs.started == ["a", "c"]
    assert jobs.ended == Counter(["a", "late", "c"])


def test_a_cancelled_caller_takes_a_waiting_job_away_and_leaves_a_started_one_to_end(
    executor: ThreadPoolExecutor,
) -> None:
    jobs = Jobs()

    async def main() -> Counter[str]:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        running = asyncio.create_task(dispatch.run(jobs.job("running"), far(), jobs.end("running")))
        waiting = asyncio.create_task(dispatch.run(jobs.job("waiting"), far(), jobs.end("waiting")))
        await asyncio.to_thread(jobs.wait_started, "running")
        for task in (running, waiting):
            task.cancel()
        for task in (running, waiting):
            with pytest.raises(asyncio.CancelledError):
                await task
        assert dispatch.queued == 0
        ended_before = Counter(jobs.ended)
        jobs.release["running"].set()
        after = asyncio.create_task(dispatch.run(jobs.job("after"), far(), jobs.end("after")))
        await asyncio.to_thread(jobs.wait_started, "after")
        jobs.release["after"].set()
        assert await after == "after"
        return ended_before

    ended_before = asyncio.run(main())
    assert ended_before == Counter(["waiting"])  # the started one holds what it holds until its end
    assert jobs.started == ["running", "after"]
    assert jobs.ended == Counter(["running", "waiting", "after"])


def test_a_failing_job_raises_in_its_caller_and_the_worker_goes_on(executor: ThreadPoolExecutor) -> None:
    jobs = Jobs()

    async def main() -> object:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        bad = asyncio.create_task(dispatch.run(jobs.job("bad", error=KeyError("x")), far(), jobs.end("bad")))
        good = asyncio.create_task(dispatch.run(jobs.job("good"), far(), jobs.end("good")))
        await asyncio.sleep(0)
        jobs.release["bad"].set()
        jobs.release["good"].set()
        with pytest.raises(KeyError):
            await bad
        return await good

    assert asyncio.run(main()) == "good"
    assert jobs.ended == Counter(["bad", "good"])


def test_close_answers_the_waiting_lets_the_running_end_and_starts_nothing_more(
    executor: ThreadPoolExecutor,
) -> None:
    jobs = Jobs()

    async def main() -> list[object]:
        dispatch: Dispatch[object] = Dispatch(1, executor)
        running = asyncio.create_task(dispatch.run(jobs.job("running"), far(), jobs.end("running")))
        waiting = asyncio.create_task(dispatch.run(jobs.job("waiting"), far(), jobs.end("waiting")))
        await asyncio.to_thread(jobs.wait_started, "running")
        dispatch.close()
        assert await waiting is None
        jobs.release["running"].set()
        later = await dispatch.run(jobs.job("later"), far(), jobs.end("later"))
        return [await running, later]

    assert asyncio.run(main()) == ["running", None]
    assert jobs.started == ["running"]
    assert jobs.ended == Counter(["running", "waiting", "later"])


def test_a_shut_executor_starts_nothing_and_every_caller_is_answered() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    jobs = Jobs()

    async def main() -> object:
        dispatch: Dispatch[object] = Dispatch(1, pool)
        return await dispatch.run(jobs.job("a"), far(), jobs.end("a"))

    assert asyncio.run(main()) is None
    assert jobs.started == []
    assert jobs.ended == Counter(["a"])


@pytest.mark.parametrize("seed", range(5))
def test_many_jobs_with_deadlines_and_cancellations_keep_every_rule(executor: ThreadPoolExecutor, seed: int) -> None:
    """300 short jobs on width 3, some with deadlines that pass, some whose callers are
    cancelled at random moments: never more than 3 run, each job runs at most once and only if
    its caller was answered with its result (or was cancelled after it started), every `ended`
    is called exactly once, and nothing is left queued."""
    import random

    rng = random.Random(seed)
    lock = threading.Lock()
    state = {"running": 0, "most": 0}
    ran: Counter[int] = Counter()
    ended: Counter[int] = Counter()

    def job(n: int) -> Callable[[], int]:
        def work() -> int:
            with lock:
                state["running"] += 1
                state["most"] = max(state["most"], state["running"])
                ran[n] += 1
            time.sleep(rng.choice([0, 0, 0.001, 0.003]))
            with lock:
                state["running"] -= 1
            return n

        return work

    async def main() -> tuple[dict[int, object], set[int], int]:
        dispatch: Dispatch[int] = Dispatch(3, executor)
        tasks: dict[int, asyncio.Task[int | None]] = {}
        for n in range(300):
            deadline = time.monotonic() + rng.choice([3600.0, 3600.0, 0.0, 0.002, 0.02])
            tasks[n] = asyncio.create_task(dispatch.run(job(n), deadline, lambda n=n: ended.update([n])))
            if rng.random() < 0.3:
                await asyncio.sleep(0)
        cancelled = set(rng.sample(sorted(tasks), 60))
        for n in sorted(cancelled):
            await asyncio.sleep(rng.choice([0, 0, 0.001]))
            tasks[n].cancel()
        answers: dict[int, object] = {}
        for n, task in tasks.items():
            try:
                answers[n] = await task
            except asyncio.CancelledError:
                answers[n] = "cancelled"
        for _ in range(2000):  # started jobs of cancelled callers end on their own
            if sum(ended.values()) == 300:
                break
            await asyncio.sleep(0.005)
        return answers, cancelled, dispatch.queued

    answers, cancelled, queued = asyncio.run(main())
    assert queued == 0
    assert state["most"] <= 3
    assert ended == Counter(range(300)), "every job's ended, exactly once"
    assert all(count == 1 for count in ran.values())
    for n, answer in answers.items():
        if answer == n:
            assert ran[n] == 1
        elif answer is None:
            assert ran[n] == 0, f"job {n} ran but its caller was told it never started"
        else:
            assert answer == "cancelled" and n in cancelled
    assert any(a is None for a in answers.values()) and any(a == n for n, a in answers.items())
