"""procfs.processes_of on this machine's /proc: a live child and a zombie child are told apart,
and neither the caller nor another uid's process is listed."""

from __future__ import annotations

import os
import signal
import time

from verifier.runner.procfs import processes_of


def _wait_for(predicate: object, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        time.sleep(0.01)
    return False


def test_a_live_child_and_a_zombie_child_are_told_apart() -> None:
    me, uid = os.getpid(), os.getuid()
    live = os.fork()
    if live == 0:
        time.sleep(30)
        os._exit(0)
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    try:
        assert _wait_for(lambda: dead in processes_of(uid, me, zombies=True))
        assert live in processes_of(uid, me)
        assert dead not in processes_of(uid, me)
        assert live not in processes_of(uid, me, zombies=True)
        assert me not in processes_of(uid, me) + processes_of(uid, me, zombies=True)
        assert live not in processes_of(uid + 1, me)  # another uid's view: not ours
    finally:
        os.kill(live, signal.SIGKILL)
        os.waitpid(live, 0)
        os.waitpid(dead, 0)
    assert dead not in processes_of(uid, me, zombies=True)  # waited for: gone


def test_the_capability_masks_are_the_kernels() -> None:
    from verifier.runner.privileges import capabilities

    with open("/proc/self/status") as fh:
        fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
    assert capabilities() == (int(fields["CapEff"], 16), int(fields["CapPrm"], 16))
