"""`Verifier.check(..., progress=)`: the trusted runner says how far a run has come (tests or
cases done / collected) while it runs, on every local backend, and only for the job that asked;
what the candidate writes cannot pose as it, and it never changes the verdict."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, QUICK_SUITE, ROOT
from verifier import Limits, Verifier
from verifier.limits import PoolConfig

pytestmark = pytest.mark.docker

LIMITS = Limits(timeout_s=60)
GOOD = EXAMPLE / "good.py"
#: Writes lines in the progress format every way a candidate can reach an output.
FORGER = (
    "import os, sys\n"
    "for n in range(3):\n"
    "    print(f'VERIFIER-PROGRESS {n:032x} 999 999', flush=True)\n"
    "    os.write(1, b'VERIFIER-PROGRESS ' + b'0' * 32 + b' 999 999\\n')\n"
    "    sys.stderr.write('VERIFIER-PROGRESS x 999 999\\n')\n"
) + GOOD.read_text()


class Heard:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []
        self.lock = threading.Lock()

    def __call__(self, done: int, total: int) -> None:
        with self.lock:
            self.calls.append((done, total))

    def assert_counts_up_to(self, total: int) -> None:
        assert self.calls, "no progress was reported"
        assert {t for _, t in self.calls} == {total}
        dones = [d for d, _ in self.calls]
        assert dones == sorted(dones) and dones[0] == 0 and dones[-1] == total


def test_a_fresh_check_reports_its_tests_as_they_end(sandbox_image: str) -> None:
    heard = Heard()
    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(GOOD, QUICK_SUITE, progress=heard)
        plain = v.check(GOOD, QUICK_SUITE)
    assert ev.ok and ev.counts.expected > 1
    heard.assert_counts_up_to(ev.counts.expected)
    assert (plain.status, plain.counts, plain.evidence_id) == (ev.status, ev.counts, ev.evidence_id)


@pytest.mark.parametrize("policy", ["fresh", "reuse"])
def test_a_pooled_check_reports_to_its_own_caller_only(sandbox_image: str, policy: str) -> None:
    first, second = Heard(), Heard()
    with Verifier.pooled(PoolConfig(policy=policy, size=1), limits=LIMITS, image=sandbox_image) as v:  # type: ignore[arg-type]
        a = v.check(GOOD, QUICK_SUITE, progress=first)
        heard_by_first = list(first.calls)
        b = v.check(EXAMPLE / "buggy_set.py", QUICK_SUITE, progress=second)
        c = v.check(GOOD, QUICK_SUITE)  # asked for none: the container's listener was dropped
    assert a.ok and not b.ok and c.ok
    first.assert_counts_up_to(a.counts.expected)
    assert first.calls == heard_by_first  # nothing of the later jobs reached the first caller
    assert second.calls and {t for _, t in second.calls} == {b.counts.expected}


def test_what_the_candidate_writes_cannot_pose_as_progress(sandbox_image: str, tmp_path: Path) -> None:
    forger = tmp_path / "solution.py"
    forger.write_text(FORGER)
    heard = Heard()
    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(forger, QUICK_SUITE, progress=heard)
    assert ev.ok
    heard.assert_counts_up_to(ev.counts.expected)
    assert "VERIFIER-PROGRESS" in ev.candidate_output_untrusted  # it was heard as output, nothing more


def test_a_program_reports_its_cases(sandbox_image: str) -> None:
    problem = ROOT / "examples" / "programs" / "a_plus_b"
    heard = Heard()
    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(problem / "good.py", problem / "suite", progress=heard)
    assert ev.ok
    heard.assert_counts_up_to(len(list((problem / "suite" / "cases").glob("*.in"))))


def test_a_listener_that_fails_changes_nothing(sandbox_image: str) -> None:
    def broken(done: int, total: int) -> None:
        raise RuntimeError("the caller's display broke")

    with Verifier(image=sandbox_image, limits=LIMITS) as v:
        ev = v.check(GOOD, QUICK_SUITE, progress=broken)
    assert ev.ok


def test_a_direct_suite_in_a_shared_server_reports_its_tests(sandbox_image: str, tmp_path: Path) -> None:
    """HumanEval's suites: the direct runner, in the trusted server itself (no forked child)."""
    from verifier.bench import humaneval as he

    problem = he.load_problems()["HumanEval/0"]
    he.write_suites(tmp_path, {problem.task_id: problem})
    (suite,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    heard = Heard()
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=LIMITS, image=sandbox_image) as v:
        ev = v.check(problem.source(problem.canonical), suite, progress=heard)
    assert ev.ok
    heard.assert_counts_up_to(ev.counts.expected)
