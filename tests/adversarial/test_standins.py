"""Stand-ins (issue 21, section 1): whatever trusted code can ask a handle or a rebuilt
exception, the answer is the real object's, or an abort no suite can catch.

One folder a case in standins/: `solution.py` (its first line says the status, its second the
technique) and `suite/`. Hostile cases turned the verifier's stand-ins into passes (a refusal
that was an ordinary TypeError, a StopIteration that ended a test's iteration, an exit that
came back as an Exception); honest ones are what plain pytest accepts and the stand-ins got
wrong (protocols a handle claimed or lacked, custom exception classes, warnings, operators)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.test_forgery import LIMITS, expected_statuses
from verifier import Status, Verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent / "standins"
CASES = sorted(p for p in HERE.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def verifier(sandbox_image: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS)


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_stand_ins(verifier: Verifier, case: Path) -> None:
    ev = verifier.check(case / "solution.py", case / "suite")
    expected = expected_statuses(case / "solution.py")
    assert ev.status in expected, (ev.status, ev.reason, [(f.test_id, f.message) for f in ev.failures][:6])
    assert ev.ok is (expected == {Status.PASSED})
    if not ev.ok:  # a refusal or an abort is never reported as the verifier's own failure
        assert ev.fault == "candidate", ev.reason
    for f in ev.failures:  # the candidate's text never reaches a trusted field
        assert "GRADER" not in f.message and "GRADER" not in (f.falsifying_example or ""), f


@pytest.mark.parametrize("case", [c for c in CASES if expected_statuses(c / "solution.py") == {Status.PASSED}])
def test_honest_cases_pass_plain_pytest_too(case: Path, tmp_path: Path) -> None:
    """The honest cases are what plain pytest accepts (the suite and the candidate in one process)."""
    for item in (case / "suite").iterdir():
        (tmp_path / item.name).write_bytes(item.read_bytes())
    (tmp_path / "solution.py").write_bytes((case / "solution.py").read_bytes())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]


def _plain(case: Path) -> str | None:
    """What plain pytest says of a hostile case (its `# plain: <outcome>` line), if it says."""
    lines = (case / "solution.py").read_text().splitlines()
    return next((line.split(":", 1)[1].strip() for line in lines[:3] if line.startswith("# plain:")), None)


@pytest.mark.parametrize("case", [c for c in CASES if _plain(c) == "failed"], ids=lambda c: c.name)
def test_hostile_cases_fail_plain_pytest_too(case: Path, tmp_path: Path) -> None:
    """A forged pass is one plain pytest does not give: the same suite fails the candidate in one
    process, so the verifier's failing verdict is the real object's answer, not a refusal."""
    for item in (case / "suite").iterdir():
        (tmp_path / item.name).write_bytes(item.read_bytes())
    (tmp_path / "solution.py").write_bytes((case / "solution.py").read_bytes())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert " passed" not in run.stdout.splitlines()[-1], run.stdout[-2000:]  # every test fails there too


@pytest.mark.parametrize("runner", ["pytest", "direct"])
@pytest.mark.parametrize("slow_import", [False, True], ids=["during-calls", "during-import"])
def test_a_budget_that_ran_out_is_one_fact(verifier: Verifier, tmp_path: Path, slow_import: bool, runner: str) -> None:
    """A run whose time ran out part way: the tests after it are not run for that reason, said
    as a timeout (never "the candidate could not be imported"), and no failure's text shows the
    verifier's own frames as if they were the test's or the candidate's. On a busy host the budget
    can run out while the candidate is still being imported: the second case makes that happen on
    purpose, so the test holds whatever the host's speed."""
    case = HERE.parent / "budget"
    solution = case / "solution.py"
    if slow_import:
        solution = tmp_path / "solution.py"
        solution.write_text("import time\ntime.sleep(3)\n" + (case / "solution.py").read_text())
    suite = case / "suite"
    if runner == "direct":  # the same tests as plain functions, run without pytest
        suite = tmp_path / "suite"
        suite.mkdir()
        (suite / "suite.toml").write_text((case / "suite" / "suite.toml").read_text() + 'runner = "direct"\n')
        (suite / "test_double.py").write_text(
            "from solution import double\n"
            + "".join(f"\n\ndef test_double_{x}():\n    assert double({x}) == {2 * x}\n" for x in range(8))
        )
    limits = verifier.limits.model_copy(update={"timeout_s": 1.0, "call_timeout_s": 1.0})
    ev = Verifier(image=verifier.image, limits=limits).check(solution, suite)
    assert ev.status is Status.TIMEOUT, (ev.status, ev.reason)
    assert ev.failures and {f.kind for f in ev.failures} == {"timeout"}, [(f.kind, f.message) for f in ev.failures]
    # The budget may run out before the first test or while the candidate is still being imported
    # on a busy host: that is said ("... ran out while importing the candidate") and still a
    # timeout. What must never appear is the import-error wording, which blames the module.
    assert not any(f.message.startswith("importing the candidate") for f in ev.failures), [
        f.message for f in ev.failures
    ]
    assert all("time limit" in f.message or "did not answer within" in f.message for f in ev.failures), [
        f.message for f in ev.failures
    ]
    assert not any("verifier_runner" in f.detail_untrusted for f in ev.failures)
