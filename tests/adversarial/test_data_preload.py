"""The environment's packages preloaded before fork (issue 37 §2), as an attacker sees them: a
candidate that monkeypatches numpy and pandas (module functions, a class's method, numpy's global
random state, print and display options, a submodule) leaves nothing for the next candidate
process, in the same job (one process per test) or in the next job of the same reused sandbox,
because every candidate process is a fresh fork of a zygote that never ran candidate code. And
every candidate process draws its own numpy random numbers, as after its own import."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.test_forgery import LIMITS
from verifier import PoolConfig, Status, Verifier
from verifier.sandbox.backend import env_tag

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent


def test_a_monkeypatched_numpy_is_not_seen_by_the_next_candidate(sandbox_image: str) -> None:
    limits = LIMITS.model_copy(update={"memory_bytes": 512 * 1024**2})
    config = PoolConfig(policy="reuse", size=1, max_uses=100)
    with Verifier.pooled(config, image=sandbox_image, limits=limits) as v:
        first = v.check(HERE / "preload_patcher.py", HERE / "preload_suite")
        second = v.check(HERE / "preload_patcher.py", HERE / "preload_suite")
        assert first.environment is not None
        pool = v.backend.pool_of(env_tag(first.environment.digest), "numpy,pandas")  # type: ignore[attr-defined]
        assert pool.stats.started == 1, pool.stats  # both jobs in one reused sandbox
    for ev in (first, second):
        assert ev.status is Status.PASSED, (ev.reason, [(f.test_id, f.message) for f in ev.failures])
        assert ev.counts.passed == 5


@pytest.mark.gvisor
def test_the_same_under_gvisor(sandbox_image: str) -> None:
    """Under gVisor each candidate process runs under a seccomp filter (`seccomp.gvisor_guard`)
    from its set-up on: reseeding numpy there must still work, and the rest must hold."""
    limits = LIMITS.model_copy(update={"memory_bytes": 512 * 1024**2, "runtime": "gvisor"})
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), image=sandbox_image, limits=limits) as v:
        ev = v.check(HERE / "preload_patcher.py", HERE / "preload_suite")
    assert ev.status is Status.PASSED, (ev.reason, [(f.test_id, f.message) for f in ev.failures])
    assert ev.counts.passed == 5
