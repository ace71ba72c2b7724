"""Honest candidates get plain pytest's verdict (issue 21, section 4).

Every case of `cases/` (see harness.py) runs once with plain pytest and once in the sandbox; the
verdicts and the failing test ids must agree, except where the case's `expect.toml` names an
intended difference (also listed in docs/suites.md). Both sides run each case once, two at a
time: the plain runs in subprocesses, the sandbox runs on one reused warm pool of two.

`DIFFERENTIAL_REPORT=path.json` writes both sides' outcomes of every case to that file.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.differential.harness import (
    CATEGORIES,
    Case,
    Outcome,
    disagreement,
    keyed,
    load_cases_dir,
    run_plain_all,
    run_verifier_all,
)

CORPUS = load_cases_dir()
IDS = [c.name for c in CORPUS]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "suites.md"

pytestmark = pytest.mark.xdist_group("differential")
#: Each side's outcomes once computed, for DIFFERENTIAL_REPORT.
SEEN: dict[str, dict[str, Outcome]] = {}


@pytest.fixture(scope="module")
def plain() -> dict[str, Outcome]:
    started = time.monotonic()
    SEEN["plain"] = run_plain_all(CORPUS)
    print(f"\ndifferential: {len(CORPUS)} cases with plain pytest in {time.monotonic() - started:.1f} s")
    return SEEN["plain"]


@pytest.fixture(scope="module")
def sandbox(sandbox_image: str) -> dict[str, Outcome]:
    started = time.monotonic()
    SEEN["sandbox"] = run_verifier_all(CORPUS, image=sandbox_image)
    print(f"\ndifferential: {len(CORPUS)} cases through the sandbox in {time.monotonic() - started:.1f} s")
    return SEEN["sandbox"]


def test_the_corpus_covers_what_section_4_asks() -> None:
    assert len(CORPUS) >= 60
    by_category = {cat: [c for c in CORPUS if c.category == cat] for cat in CATEGORIES}
    assert all(by_category.values()), [cat for cat, cases in by_category.items() if not cases]
    wrong = sum(c.honest == "wrong" for c in CORPUS)
    assert 0.25 <= wrong / len(CORPUS) <= 0.45, f"{wrong} of {len(CORPUS)} candidates are wrong"


def test_every_intended_difference_is_documented() -> None:
    docs = DOCS.read_text()
    missing = [c.name for c in CORPUS if c.difference and f"`{c.name}`" not in docs]
    assert not missing, f"intended differences not listed in docs/suites.md: {missing}"


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_plain_pytest_gives_the_cases_own_verdict(case: Case, plain: dict[str, Outcome]) -> None:
    """The corpus checks itself: a correct candidate passes plain pytest, a wrong one fails
    exactly the tests its case names."""
    outcome = plain[case.name]
    assert outcome.failing == keyed(case.failing), (outcome.why, outcome.note)
    assert outcome.ok == (not case.failing), outcome.note


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_the_verifier_agrees_with_plain_pytest(
    case: Case, plain: dict[str, Outcome], sandbox: dict[str, Outcome]
) -> None:
    problem = disagreement(case, plain[case.name], sandbox[case.name])
    assert problem is None, "\n" + problem


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    path = os.environ.get("DIFFERENTIAL_REPORT")
    if not path:
        return
    outcomes: dict[str, dict[str, object]] = {}
    for side, results in SEEN.items():
        for name, outcome in results.items():
            outcomes.setdefault(name, {})[side] = {
                "ok": outcome.ok,
                "failing": sorted(outcome.failing),
                "why": outcome.why,
                "note": outcome.note,
            }
    Path(path).write_text(json.dumps(outcomes, indent=2, sort_keys=True))
