"""Unit tests of the warm pool's own logic (no engine)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from verifier.errors import SandboxUnavailable
from verifier.limits import PoolConfig
from verifier.runner.protocol import launch_command
from verifier.sandbox.admission import Unlimited
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.pool import WarmPool


class _BrokenClient:
    """An engine client on which everything fails with an error no engine raises (a bug of ours)."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"boom ({name})")


def test_a_fault_of_ours_while_starting_a_sandbox_fails_the_job_at_once() -> None:
    pool = WarmPool(PoolConfig(size=1), image="x", client=_BrokenClient(), idle_timeout_s=None, admission=Unlimited())  # type: ignore[arg-type]
    try:
        started = time.monotonic()
        with pytest.raises(SandboxUnavailable, match=r"could not be started \(RuntimeError: boom"):
            pool._acquire()  # where a job waits for a sandbox
        assert time.monotonic() - started < 10  # not the acquire wait (ACQUIRE_TIMEOUT_S)
    finally:
        pool._closed = True  # nothing was started; close() would ask the broken engine


def test_warm_sandboxes_are_keyed_by_image() -> None:
    """Jobs on another image (a suite's environment) go to that image's own pool, never to a
    container of this one: two environments never share a warm sandbox."""
    broken: Any = _BrokenClient()
    pool = WarmPool(PoolConfig(size=1), image="base", client=broken, idle_timeout_s=None, admission=Unlimited())
    try:
        numpy, pandas = pool.pool_of("verifier-env:numpy"), pool.pool_of("verifier-env:pandas")
        assert pool.pool_of("base") is pool
        assert numpy is pool.pool_of("verifier-env:numpy") and numpy is not pandas
        assert (numpy.image, pandas.image) == ("verifier-env:numpy", "verifier-env:pandas")
        assert numpy.config == pool.config and numpy.admission is pool.admission
    finally:
        for each in (pool, *pool._others.values()):
            each._closed = True  # nothing was started; close() would ask the broken engine


def test_warm_sandboxes_are_keyed_by_image_and_preload() -> None:
    """A test suite's job on an environment preloads its numpy/pandas (`protocol.data_preload`), a
    program's on the same image does not: they never share a warm sandbox, and each pool starts
    its runners with its own preload."""
    broken: Any = _BrokenClient()
    pool = WarmPool(PoolConfig(size=1), image="base", client=broken, idle_timeout_s=None, admission=Unlimited())
    try:
        data, bare = pool.pool_of("verifier-env:x", "numpy,pandas"), pool.pool_of("verifier-env:x")
        assert data is not bare and data is pool.pool_of("verifier-env:x", "numpy,pandas")
        assert (data.data, bare.data) == ("numpy,pandas", "")
        job = SandboxJob(
            image="verifier-env:x", command=launch_command(1, "", "numpy,pandas"), limits=pool.limits, mode="launcher"
        )
        assert data._compatible(job) and not bare._compatible(job)
        assert not data._compatible(
            SandboxJob(image="verifier-env:x", command=launch_command(1), limits=pool.limits, mode="launcher")
        )
    finally:
        for each in (pool, *pool._others.values()):
            each._closed = True


class _Ending:
    """A container whose runner has sent its last result: it ends (eof) after `after_s`, or never."""

    def __init__(self, after_s: float | None) -> None:
        import threading

        self.name, self.eof, self.removed_at_eof = "c", False, None
        self.cond = threading.Condition()
        if after_s is not None:
            threading.Timer(after_s, self._end).start()

    def _end(self) -> None:
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_for(self, predicate: Any, timeout: float) -> bool:
        with self.cond:
            return bool(self.cond.wait_for(predicate, timeout))

    def remove(self) -> bool:
        self.removed_at_eof = self.eof
        return True


def test_a_runner_that_said_its_last_result_is_removed_once_it_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh container ends by itself after its one job: it is removed after its end (the
    engine spared a kill), and one that does not end is still removed, by force, after the wait."""
    from verifier.sandbox import pool as pool_module

    broken: Any = _BrokenClient()
    pool = WarmPool(PoolConfig(size=1), image="x", client=broken, idle_timeout_s=None, admission=Unlimited())
    pool._closed = True  # nothing is started; close() would ask the broken engine
    ending: Any = _Ending(0.2)
    pool._destroy(ending, exiting=True)
    assert ending.removed_at_eof is True
    monkeypatch.setattr(pool_module, "EXIT_WAIT_S", 0.3)
    stuck: Any = _Ending(None)
    started = time.monotonic()
    pool._destroy(stuck, exiting=True)
    assert stuck.removed_at_eof is False and time.monotonic() - started < 5
    monkeypatch.setattr(pool_module, "EXIT_WAIT_S", 60.0)
    other: Any = _Ending(None)  # not exiting (a timeout, a broken one): removed at once, no wait
    started = time.monotonic()
    pool._destroy(other)
    assert other.removed_at_eof is False and time.monotonic() - started < 30
