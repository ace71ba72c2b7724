"""Hostile programs in compiled languages (issue 36 §3): the compiler and the program run as the
candidate's user, with no access to /run/trusted, the suite or another case. Each attacker in
language_programs/ (first line: the status it must get; second: its technique) runs in a size-1
`reuse` pool of the language image, followed by `victim.c`, a correct C program that prints a
wrong answer when it finds anything an earlier program (or its compiler) left: files in the
scratch places, processes of its uid. The victim's evidence must equal its evidence from a
fresh container."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from verifier import Candidate, Evidence, Limits, Status, Verifier
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("languages")]

HERE = Path(__file__).parent
PROGRAMS = HERE / "language_programs"
ATTACKERS = sorted(p for p in PROGRAMS.iterdir() if p.stem != "victim")
SUITE, VICTIM = HERE / "program_suite", PROGRAMS / "victim.c"
LIMITS = Limits(timeout_s=60, memory_bytes=512 * 1024**2, output_bytes=256 * 1024)


def expected_statuses(path: Path) -> set[Status]:
    m = re.match(r"// expect: (.+)", path.read_text().splitlines()[0])
    assert m, f"{path.name} must start with '// expect: <status> [...]'"
    return {Status(s) for s in m.group(1).split()}


def essence(ev: Evidence) -> tuple[object, ...]:
    return (ev.evidence_id, ev.status, ev.counts, [(c.name, c.status, c.message, c.difference) for c in ev.cases])


@pytest.fixture(scope="module")
def language_image(docker_client: docker.DockerClient) -> str:
    from verifier.sandbox.image import language_image

    return language_image(docker_client, "c").tag


@pytest.fixture(scope="module")
def alone(sandbox_image: str, language_image: str) -> Evidence:
    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(VICTIM, SUITE)
    assert ev.ok, [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in ev.failures]
    return ev


@pytest.fixture(scope="module")
def reused(sandbox_image: str, language_image: str) -> Iterator[Verifier]:
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, max_uses=10_000, preload=""), limits=LIMITS, image=sandbox_image
    ) as v:
        yield v


def test_every_attacker_names_its_technique() -> None:
    assert len(ATTACKERS) >= 8
    for path in ATTACKERS:
        technique = path.read_text().splitlines()[1]
        assert technique.startswith("// technique: ") and len(technique) > 30, path.name


@pytest.mark.parametrize("attacker", ATTACKERS, ids=[p.name for p in ATTACKERS])
def test_a_hostile_compiled_program_gets_its_status_and_leaves_nothing(
    reused: Verifier, alone: Evidence, attacker: Path
) -> None:
    ev = reused.check(attacker, SUITE)
    want = expected_statuses(attacker)
    shown = [(c.name, c.status.value, c.message) for c in ev.cases][:3]
    assert ev.status in want, (ev.status, ev.reason, shown, [f.detail_untrusted[-300:] for f in ev.failures])
    if Status.PASSED not in want:
        assert not ev.ok and ev.fault.value == "candidate"
    after = reused.check(VICTIM, SUITE)
    assert essence(after) == essence(alone), [(f.test_id, f.message, f.detail_untrusted[-300:]) for f in after.failures]


def test_the_compiler_reads_nothing_of_the_trusted_side(reused: Verifier) -> None:
    """Refused by the kernel (another uid's 0700 folder; another uid's /proc entries), so the
    compiler's message quotes nothing of the file: it says it could not read it."""
    for name in ("include_trusted_case.c", "include_proc_environ.c"):
        ev = reused.check(PROGRAMS / name, SUITE)
        assert ev.status is Status.COMPILE_ERROR and ev.program is not None and ev.program.compile is not None
        assert not ev.program.compile.ok and ev.cases and not any(c.ran for c in ev.cases)
        detail = ev.failures[0].detail_untrusted
        assert "Permission denied" in detail, detail
        assert "PATH=" not in detail and "VERIFIER" not in detail


def test_a_compile_bomb_is_the_candidates_compile_error(reused: Verifier) -> None:
    ev = reused.check(PROGRAMS / "huge_static_array.c", SUITE)
    assert ev.status is Status.COMPILE_ERROR and ev.fault.value == "candidate"
    assert ev.failures[0].test_id == "<compile>" and ev.failures[0].kind.value == "compile_error"


def test_a_source_without_its_language_is_refused(reused: Verifier) -> None:
    ev = reused.check(Candidate.from_path(VICTIM), SUITE, language="rust")
    assert ev.status is Status.INVALID_INPUT and "rust" in ev.reason and "c" in ev.reason
