"""Unit tests of the warm pool's own logic (no engine)."""

from __future__ import annotations

import time

import pytest

from verifier.errors import SandboxUnavailable
from verifier.limits import PoolConfig
from verifier.sandbox.admission import Unlimited
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
