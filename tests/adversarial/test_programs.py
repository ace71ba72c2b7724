"""Hostile programs on stdin/stdout (issue 10, item 5): each must end ok: false with the status
its first line names (or pass, for the one that proves each case starts clean), as the
candidate's fault, and leave nothing for the next program in the same reused sandbox.

Every attacker in programs/ runs in a size-1 `reuse` pool, followed by `program_victim.py`, a
correct program that prints a wrong answer when it finds anything an earlier program left
(files, IPC objects, processes). The victim's evidence must equal its evidence from a fresh
container."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from verifier import Evidence, Limits, Status, Verifier
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent
ATTACKERS = sorted((HERE / "programs").glob("*.py"))
SUITE, VICTIM = HERE / "program_suite", HERE / "program_victim.py"
LIMITS = Limits(timeout_s=60, memory_bytes=512 * 1024**2, output_bytes=256 * 1024)


def expected_statuses(path: Path) -> set[Status]:
    m = re.match(r"# expect: (.+)", path.read_text().splitlines()[0])
    assert m, f"{path.name} must start with '# expect: <status> [...]'"
    return {Status(s) for s in m.group(1).split()}


def essence(ev: Evidence) -> tuple[object, ...]:
    return (ev.evidence_id, ev.status, ev.counts, [(c.name, c.status, c.message, c.difference) for c in ev.cases])


@pytest.fixture(scope="module")
def alone(sandbox_image: str) -> Evidence:
    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(VICTIM, SUITE)
    assert ev.ok, [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in ev.failures]
    return ev


@pytest.fixture(scope="module")
def reused(sandbox_image: str) -> Iterator[Verifier]:
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, max_uses=10_000, preload=""), limits=LIMITS, image=sandbox_image
    ) as v:
        yield v


def test_every_attacker_names_its_technique() -> None:
    assert len(ATTACKERS) >= 10
    for path in ATTACKERS:
        technique = path.read_text().splitlines()[1]
        assert technique.startswith("# technique: ") and len(technique) > 30, path.name


@pytest.mark.parametrize("attacker", ATTACKERS, ids=[p.stem for p in ATTACKERS])
def test_a_hostile_program_gets_its_status_and_leaves_nothing(
    reused: Verifier, alone: Evidence, attacker: Path
) -> None:
    ev = reused.check(attacker, SUITE)
    want = expected_statuses(attacker)
    assert ev.status in want, (ev.status, ev.reason, [(c.name, c.status.value, c.message) for c in ev.cases])
    if Status.PASSED not in want:
        assert not ev.ok and ev.fault.value == "candidate"
        assert ev.counts.passed < ev.counts.expected
    after = reused.check(VICTIM, SUITE)
    assert essence(after) == essence(alone), [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in after.failures]


def test_what_the_thief_the_late_writer_and_the_worker_get(reused: Verifier) -> None:
    ev = reused.check(HERE / "programs" / "read_trusted_files.py", SUITE)
    assert all(c.status is Status.FAILED for c in ev.cases)  # nothing of the suite was readable
    ev = reused.check(HERE / "programs" / "late_writer_after_exit.py", SUITE)
    # the program is every process of the case: it has not ended while its child holds stdout
    assert ev.cases[0].status is Status.TIMEOUT and ev.cases[0].ran
    ev = reused.check(HERE / "programs" / "forked_worker_memory.py", SUITE)
    # memory is the largest of any process of the case, not the main process's alone
    assert ev.cases[0].status is Status.OOM and ev.cases[0].memory_bytes > 64 << 20
    ev = reused.check(HERE / "programs" / "closes_stdout_and_spins.py", SUITE)
    assert ev.cases[0].status is Status.TIMEOUT and ev.cases[0].ran and not ev.cases[-1].ran
    assert "not run" in ev.cases[-1].message


def test_a_flood_of_bytes_is_shown_escaped(reused: Verifier) -> None:
    ev = reused.check(HERE / "programs" / "floods_stderr.py", SUITE)
    assert ev.status is Status.OUTPUT_LIMIT
    assert "\x1b" not in ev.to_json() and ev.to_json().isascii()
    assert all("\x1b" not in f.message for f in ev.failures)


def test_stderr_cut_is_reported(reused: Verifier) -> None:
    ev = reused.check(HERE / "programs" / "stderr_past_the_cut.py", SUITE)
    assert ev.ok and ev.candidate_output_truncated


def test_no_zombie_carries_from_case_to_case(sandbox_image: str, runtime: str) -> None:
    """Under every runtime: a zombie one case leaves (its name, pid and number readable in /proc)
    is gone before the next case, and before the next program in the same sandbox. Under gVisor
    orphans go to the trusted server (PID 1), which must reap them as they end."""
    limits = LIMITS.model_copy(update={"runtime": runtime})
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, max_uses=100, preload=""), limits=limits, image=sandbox_image
    ) as v:
        ev = v.check(HERE / "programs" / "zombie_between_cases.py", SUITE)
        assert ev.ok, [(c.name, c.status.value, c.message, c.difference) for c in ev.cases]
        after = v.check(VICTIM, SUITE)
        assert after.ok, [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in after.failures]
