"""Every forgery and containment technique of the threat model must end ok: false with the
right status, and a correct candidate must still pass, under every container runtime (the
`runtime` fixture: runc and gVisor). One candidate file per technique in candidates/; its first
line says the status(es) it must get."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from tests.conftest import QUICK_SUITE as SUITE
from verifier import Limits, Status, Verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent
CANDIDATES = sorted((HERE / "candidates").glob("*.py"))
#: Tighter limits than the defaults, so the hostile candidates finish fast.
LIMITS = Limits(timeout_s=30, call_timeout_s=3, memory_bytes=256 * 1024**2, output_bytes=256 * 1024)


#: Where a technique can end otherwise under gVisor, the other statuses it may get there: a gVisor
#: sandbox out of memory is killed as a whole (status oom; it has no OOM killer of its own), and
#: each of its processes costs host memory of its own, so a fork bomb can meet the memory limit
#: before the process limit.
GVISOR_ALSO = {"fork_bomb": {Status.OOM}}


def expected_statuses(path: Path) -> set[Status]:
    m = re.match(r"# expect: (.+)", path.read_text().splitlines()[0])
    assert m, f"{path.name} must start with '# expect: <status> [...]'"
    return {Status(s) for s in m.group(1).split()}


@pytest.fixture(scope="module")
def strict_verifier(sandbox_image: str, runtime: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS.model_copy(update={"runtime": runtime}))


@pytest.mark.parametrize("candidate", CANDIDATES, ids=[p.stem for p in CANDIDATES])
def test_forgery_fails_closed(strict_verifier: Verifier, candidate: Path) -> None:
    ev = strict_verifier.check(candidate, SUITE)
    expected = expected_statuses(candidate)
    if strict_verifier.limits.runtime == "gvisor":
        expected |= GVISOR_ALSO.get(candidate.stem, set())
    assert ev.ok is False
    assert ev.status in expected, (
        ev.status,
        ev.reason,
        [f.message for f in ev.failures][:3],
    )
    assert ev.counts.passed < max(ev.counts.expected, 1)
    assert ev.fault.value == "candidate"  # a forgery is never passed off as our failure or a busy host
    assert ev.limits.runtime == strict_verifier.limits.runtime


def test_every_attacker_names_its_technique() -> None:
    for path in [*CANDIDATES, *sorted((HERE / "neighbours").glob("*.py")), *sorted((HERE / "objects").glob("*.py"))]:
        lines = path.read_text().splitlines()
        technique = lines[1] if lines[0].startswith("# expect: ") else lines[0]
        assert technique.startswith("# technique: ") and len(technique) > len("# technique: ") + 8, path.name


def test_correct_candidate_still_passes_under_the_same_limits(strict_verifier: Verifier) -> None:
    ev = strict_verifier.check(EXAMPLE / "good.py", SUITE)
    assert ev.ok, ev.reason


def test_containment_probe_finds_no_leak(strict_verifier: Verifier) -> None:
    ev = strict_verifier.check(HERE / "probe.py", HERE / "probe_suite")
    assert ev.ok, [(f.test_id, f.detail_untrusted[-400:]) for f in ev.failures]
    assert ev.counts.passed == 3


def test_specific_messages(strict_verifier: Verifier) -> None:
    ev = strict_verifier.check(HERE / "candidates" / "always_equal.py", SUITE)
    # Its object stays in its process, as a handle whose class is named like the object's: the
    # suite's `type(result) is list` sees a class that is not list, as plain pytest would.
    assert any(f.message == "an assertion failed" for f in ev.failures)
    assert all("AlwaysEqual" not in f.message for f in ev.failures)  # its class name is its own text
    assert any("got AlwaysEqual" in f.detail_untrusted for f in ev.failures)  # there, as data
    ev = strict_verifier.check(HERE / "candidates" / "os_exit_in_function.py", SUITE)
    assert any("exited with code 0" in f.message for f in ev.failures), [f.message for f in ev.failures]
