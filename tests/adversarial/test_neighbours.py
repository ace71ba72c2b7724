"""Neighbours in a reused sandbox: whatever a candidate does, the next candidate's verdict is
the one it gets on its own (issue 8, section 1).

Every attacker here and every forgery in candidates/ runs in a size-1 `reuse` pool, followed by
`victim.py`, a correct candidate whose suite fails if anything of an earlier candidate is left
(files in any writable place, SysV IPC, message queues, processes, listeners, changed limits or
priority, memory or CPU taken). The victim's evidence must equal its evidence from a fresh
container. The attackers in neighbours/ are correct: their own job passes, so the sandbox goes
back to the pool, and the reset (not a recycle) must be what protects the victim. Under every
container runtime (the `runtime` fixture: runc and gVisor).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import QUICK_SUITE as SUITE
from verifier import Evidence, Limits, Verifier
from verifier.limits import PoolConfig
from verifier.sandbox.pool import WarmPool

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent
NEIGHBOURS = sorted((HERE / "neighbours").glob("*.py"))
FORGERIES = [(p, SUITE) for p in sorted((HERE / "candidates").glob("*.py"))] + [
    (p, HERE / "objects_suite") for p in sorted((HERE / "objects").glob("*.py"))
]
VICTIM, VICTIM_SUITE = HERE / "victim.py", HERE / "victim_suite"
ZOMBIES, ZOMBIE_SUITE = HERE / "zombie_messenger.py", HERE / "zombie_suite"
#: Memory for a victim that needs 300 MiB of it.
LIMITS = Limits(timeout_s=30, call_timeout_s=3, memory_bytes=512 * 1024**2, output_bytes=256 * 1024)


def essence(ev: Evidence) -> tuple[object, ...]:
    return (
        ev.evidence_id,
        ev.status,
        ev.counts,
        [(f.test_id, f.kind, f.message) for f in ev.failures],
        ev.candidate_output_untrusted,
    )


@pytest.fixture(scope="module")
def limits(runtime: str) -> Limits:
    return LIMITS.model_copy(update={"runtime": runtime})


@pytest.fixture(scope="module")
def alone(sandbox_image: str, limits: Limits) -> Evidence:
    with Verifier(image=sandbox_image, limits=limits) as v:
        ev = v.check(VICTIM, VICTIM_SUITE)
    assert ev.ok, [(f.test_id, f.detail_untrusted[-300:]) for f in ev.failures]
    return ev


@pytest.fixture(scope="module")
def reused(sandbox_image: str, limits: Limits) -> Iterator[Verifier]:
    with Verifier.pooled(PoolConfig(policy="reuse", size=1, max_uses=10_000), limits=limits, image=sandbox_image) as v:
        yield v


def victim_after(reused: Verifier, attacker: Path, suite: Path = SUITE) -> tuple[Evidence, Evidence]:
    first = reused.check(attacker, suite)
    return first, reused.check(VICTIM, VICTIM_SUITE)


@pytest.mark.parametrize("attacker", NEIGHBOURS, ids=[p.stem for p in NEIGHBOURS])
def test_a_correct_neighbour_leaves_nothing_for_the_next(reused: Verifier, alone: Evidence, attacker: Path) -> None:
    pool = reused.backend
    assert isinstance(pool, WarmPool)
    destroyed = pool.stats.destroyed
    first, after = victim_after(reused, attacker)
    assert first.ok, (first.status, first.reason, [f.message for f in first.failures][:3])
    assert essence(after) == essence(alone), [(f.test_id, f.detail_untrusted[-500:]) for f in after.failures]
    assert pool.stats.destroyed == destroyed, "the reset, not a recycle, must have cleaned the sandbox"


# Runc only: a forger's job ends in a recycle or a reset like any neighbour's, and the reset's
# gVisor-specific parts are the neighbours' (above), which run under both runtimes; every forgery
# runs under gVisor in test_forgery. (All of them again after a victim would cost CI minutes.)
@pytest.mark.parametrize("runtime", ["runc"], indirect=True)
@pytest.mark.parametrize(("attacker", "suite"), FORGERIES, ids=[p.stem for p, _ in FORGERIES])
def test_a_forger_cannot_change_the_next_verdict(
    reused: Verifier, alone: Evidence, attacker: Path, suite: Path
) -> None:
    first, after = victim_after(reused, attacker, suite)
    assert first.ok is (attacker.stem == "good_thing")
    assert essence(after) == essence(alone), [(f.test_id, f.detail_untrusted[-500:]) for f in after.failures]


def test_no_zombie_carries_state_from_test_to_test(reused: Verifier) -> None:
    """Within one job: a zombie one test leaves is reaped before the next test can read it (under
    gVisor orphans go to the trusted server, PID 1, which reaps them as they end)."""
    ev = reused.check(ZOMBIES, ZOMBIE_SUITE)
    assert ev.ok, [(f.test_id, f.detail_untrusted[-500:]) for f in ev.failures]
