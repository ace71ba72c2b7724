"""Per-test candidate processes, the charged clock on a busy host, and admission slots."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker
import pytest

from tests.conftest import ROOT
from verifier import Limits, Status, Verifier
from verifier.errors import HostOverloaded
from verifier.sandbox.admission import Admission
from verifier.sandbox.gc import owner_alive, owner_labels, process_start
from verifier.sandbox.hardening import LABEL_OWNER_PID, LABEL_OWNER_START

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.mark.docker
def test_every_test_meets_a_fresh_candidate_process_by_default(verifier: Verifier, tmp_path: Path) -> None:
    ev = verifier.check(FIXTURES / "stateful.py", FIXTURES / "per_test_suite")
    assert ev.ok, [(f.test_id, f.detail_untrusted[-300:]) for f in ev.failures]
    assert ev.candidate_process == "per-test"
    shared = tmp_path / "suite"
    shutil.copytree(FIXTURES / "per_test_suite", shared)
    (shared / "suite.toml").write_text('candidate_process = "per-run"\n')
    ev = verifier.check(FIXTURES / "stateful.py", shared)
    assert ev.status is Status.FAILED and ev.candidate_process == "per-run"  # state carried over, as documented
    assert [f.test_id for f in ev.failures] == ["test_state.py::test_second"]


CPU_CANDIDATE = """
def work(n):
    total = 0
    for i in range(n):
        total += i * i
    return total
"""
CPU_SUITE = """
from solution import work

def test_work():
    for _ in range(16):
        assert work(400_000) == sum(i * i for i in range(400_000))
"""


@contextmanager
def busy_host(image: str, factor: int) -> Iterator[None]:
    """`factor` times as many CPU-bound containers as the machine has cores, outside verifier's
    admission control: other work keeping the CPUs busy. (Host processes outside containers
    would not do: the kernel groups them by session, and one group is no match for a container.)"""
    client = docker.from_env()
    hogs = []
    try:
        for _ in range(factor * (os.cpu_count() or 1)):
            hogs.append(
                client.containers.run(
                    image,
                    ["python3", "-c", "while True: pass"],
                    detach=True,
                    network_mode="none",
                    nano_cpus=10**9,
                    labels=owner_labels(),
                )
            )
        time.sleep(1)
        yield
    finally:
        for hog in hogs:
            hog.remove(force=True)
        client.close()


@pytest.mark.docker
def test_a_busy_host_does_not_turn_a_correct_candidate_into_a_timeout(sandbox_image: str, tmp_path: Path) -> None:
    """Each call needs ~0.1 s of CPU; its limit is 0.4 s. With the machine's CPUs oversubscribed
    three times over by other containers, wall time per call passes the limit; the charged clock
    credits the waiting, so the verdict is the candidate's own (or, at worst, overloaded). 16
    calls, so that the waiting the last assertion asks for is there even beside a busy test
    worker (with 6, a fresh-clone run saw 0.39 s of it)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_work.py").write_text(CPU_SUITE)
    with (
        busy_host(sandbox_image, 3),
        Verifier(image=sandbox_image, limits=Limits(timeout_s=60, call_timeout_s=0.4)) as v,
    ):
        ev = v.check(CPU_CANDIDATE, suite)
    assert ev.status in (Status.PASSED, Status.OVERLOADED), (ev.status, [f.message for f in ev.failures])
    assert ev.durations.host_wait_s > 0.5  # it did wait for CPUs, and that was not charged


@pytest.mark.docker
def test_a_sleeper_is_still_the_candidates_timeout_on_a_busy_host(sandbox_image: str, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_sleep.py").write_text("from solution import nap\n\ndef test_nap():\n    nap()\n")
    with busy_host(sandbox_image, 2), Verifier(image=sandbox_image, limits=Limits(timeout_s=30, call_timeout_s=1)) as v:
        ev = v.check("import time\n\ndef nap():\n    time.sleep(30)\n", suite)
    assert ev.status is Status.TIMEOUT, ev.reason  # sleeping is not waiting for a CPU


def test_admission_slots_are_shared_across_processes_and_the_wait_is_bounded(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SLOT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        started = time.monotonic()
        with pytest.raises(HostOverloaded, match="no sandbox slot"), Admission(1, wait_s=0.5, folder=tmp_path).slot():
            pass
        assert time.monotonic() - started >= 0.5
        holder.kill()  # a process that dies releases its slot with it
        holder.wait()
        with Admission(1, wait_s=5, folder=tmp_path).slot() as waited:
            assert waited < 5
    finally:
        holder.kill()
        holder.wait()


HOLD_SLOT = """
import sys, time
from pathlib import Path
from verifier.sandbox.admission import Admission
with Admission(1, folder=Path(sys.argv[1])).slot():
    print("holding", flush=True)
    time.sleep(60)
"""


HAMMER = """
import sys, time
from pathlib import Path
from verifier.sandbox.admission import Admission
admission = Admission(1, folder=Path(sys.argv[1]))
print("hammering", flush=True)
stop = time.monotonic() + 30
while time.monotonic() < stop:  # a batch: give the slot back and want it again at once
    with admission.slot():
        time.sleep(0.01)
"""


def test_a_batch_that_keeps_asking_cannot_keep_the_slots_to_itself(tmp_path: Path) -> None:
    batch = subprocess.Popen([sys.executable, "-c", HAMMER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert batch.stdout is not None and batch.stdout.readline().strip() == "hammering"
        for _ in range(10):  # each wait ends with a slot within a second, never HostOverloaded
            with Admission(1, wait_s=1, folder=tmp_path).slot():
                pass
    finally:
        batch.kill()
        batch.wait()


def test_a_slot_given_back_in_this_process_is_taken_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job at the door hears a slot of its own process come free, rather than finding it at
    its next poll (a server's next check starts as its last one ends): with polls a minute apart,
    it still gets the slot as soon as it is given back."""
    from verifier.sandbox import admission as module

    monkeypatch.setattr(module, "POLL_S", 60.0)
    admission = Admission(1, folder=tmp_path)
    holding, release, waited = threading.Event(), threading.Event(), []

    def holder() -> None:
        with admission.slot():
            holding.set()
            release.wait(30)

    def waiter() -> None:
        holding.wait(30)
        with admission.slot():
            waited.append(time.monotonic())

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    for thread in threads:
        thread.start()
    assert holding.wait(30)
    time.sleep(0.2)  # the waiter is at the door, polling
    released = time.monotonic()
    release.set()
    for thread in threads:
        thread.join(50)
    assert waited and waited[0] - released < 30  # not the minute of a poll


def test_the_door_does_not_poll_while_this_process_holds_every_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody else can free a slot this process holds: a job at the door while this process
    holds them all waits for its own release (heard at once) instead of polling every 2 ms (a
    process with more jobs than slots has one at the door all the time). The bound is on how often it looks, so a
    slow machine only makes it pass more easily; then the release is still heard."""
    admission = Admission(2, folder=tmp_path)
    tries = 0
    real_try = admission._try

    def counted(index: int) -> int | None:
        nonlocal tries
        tries += 1
        return real_try(index)

    monkeypatch.setattr(admission, "_try", counted)
    holding = [threading.Event(), threading.Event()]
    release = threading.Event()
    got: list[float] = []

    def holder(mine: threading.Event) -> None:
        with admission.slot():
            mine.set()
            release.wait(30)

    def waiter() -> None:
        with admission.slot():
            got.append(time.monotonic())

    holders = [threading.Thread(target=holder, args=(event,)) for event in holding]
    for thread in holders:
        thread.start()
    assert all(event.wait(30) for event in holding)
    before = tries
    late = threading.Thread(target=waiter)
    late.start()
    time.sleep(0.5)
    looked = tries - before
    release.set()
    for thread in [*holders, late]:
        thread.join(30)
    # every 2 ms, two slots a look: ~500 in half a second; every 50 ms: about 20
    assert looked <= 60, looked
    assert got, "the waiter never got the slot that was given back"


def test_admission_never_lets_more_than_n_run_at_once(tmp_path: Path) -> None:
    admission = Admission(2, folder=tmp_path)
    running, peak, lock = 0, 0, threading.Lock()

    def job() -> None:
        nonlocal running, peak
        with admission.slot():
            with lock:
                running += 1
                peak = max(peak, running)
            time.sleep(0.05)
            with lock:
                running -= 1

    threads = [threading.Thread(target=job) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 2


def test_a_reused_pid_does_not_hide_an_orphan() -> None:
    labels = owner_labels()
    assert owner_alive(labels)
    assert process_start(os.getpid()) != ""
    reused = {**labels, LABEL_OWNER_START: str(int(labels[LABEL_OWNER_START]) + 1)}
    assert not owner_alive(reused)  # same pid, another process: its container is an orphan
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not owner_alive({**labels, LABEL_OWNER_PID: str(dead.pid)})
