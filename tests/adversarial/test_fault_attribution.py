"""Whose fault it is (issue 21, section 5): what the candidate does to the size of its own result,
and to the sandbox's memory, is the candidate's doing, never our `infra_error`. Each hostile
candidate is a file in fault_attribution/ whose first line names its technique; each runs under
every container runtime (the `runtime` fixture: runc and gVisor).

- The result line is ASCII JSON: a character of candidate text costs up to 12 bytes there. The
  runner bounds every field in JSON bytes (`protocol.bounded_result`), so output of control
  characters or invalid UTF-8 just under the cap, long messages outside the BMP and deep
  exception chains give a readable result whose failures say what happened, cut with a marker.
- A memory bomb under gVisor ends the whole sandbox (its kernel's process is what the host's
  OOM killer takes), and the engine's OOM event may come after its exit event: the host asks the
  engine's event log (`Container.oom_killed`), so the run is `oom` every time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import QUICK_SUITE as SUITE
from verifier import Limits, Status, Verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent
ATTACKERS = sorted((HERE / "fault_attribution").glob("*.py"))
OUTPUT_BYTES = 1024**2  # the default: 16 tests x 60 KB of output fit under it
LIMITS = Limits(timeout_s=60, call_timeout_s=5, memory_bytes=256 * 1024**2, output_bytes=OUTPUT_BYTES)


@pytest.fixture(scope="module")
def verifier(sandbox_image: str, runtime: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS.model_copy(update={"runtime": runtime}))


def test_every_attacker_names_its_technique() -> None:
    assert ATTACKERS
    for path in ATTACKERS:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# technique: ") and len(first) > 30, path.name


@pytest.mark.parametrize("attacker", ATTACKERS, ids=[p.stem for p in ATTACKERS])
def test_a_result_the_candidate_swelled_is_still_the_candidates_failure(verifier: Verifier, attacker: Path) -> None:
    ev = verifier.check(attacker, SUITE)
    assert ev.status is Status.FAILED, (ev.status, ev.reason)
    assert ev.fault.value == "candidate"
    assert ev.counts.expected == 16 and ev.counts.passed == 0
    # every failure says what happened: the test, the kind, and the exception's text (cut, marked)
    assert len(ev.failures) == 16
    # Every attacker's exception is too large to cross exactly (args over wire.MAX_EXCEPTION_DATA,
    # or a chain longer than wire.MAX_CHAIN): since round four (issue 32 §2) that is an abort, never
    # a stand-in with its text cut; still the candidate's failure, its text kept cut and marked.
    for failure in ev.failures:
        assert failure.kind.value == "not_plain_data", failure
        assert "cannot cross" in failure.message, failure
        assert "characters cut]" in failure.detail_untrusted or len(failure.detail_untrusted) < 4000


def test_output_cut_to_fit_is_marked(verifier: Verifier) -> None:
    ev = verifier.check(HERE / "fault_attribution" / "escaped_output.py", SUITE)
    assert ev.status is Status.FAILED, (ev.status, ev.reason)
    assert "characters cut]" in ev.candidate_output_untrusted or ev.candidate_output_truncated


MEMORY_BOMB = HERE / "candidates" / "memory_bomb.py"


@pytest.mark.parametrize("attempt", range(5))
def test_a_memory_bomb_is_oom_every_time(verifier: Verifier, attempt: int) -> None:
    ev = verifier.check(MEMORY_BOMB, SUITE)
    assert ev.status is Status.OOM, (ev.status, ev.reason, [f.message for f in ev.failures][:2])
    assert ev.fault.value == "candidate"
