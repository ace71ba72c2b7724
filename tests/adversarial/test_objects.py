"""Objects by handle (issue 10): hostile objects end ok: false with the right status; a
correct one passes. One candidate per technique in objects/; its first line says the status."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.test_forgery import LIMITS, expected_statuses
from verifier import Status, Verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent
OBJECTS = sorted((HERE / "objects").glob("*.py"))


@pytest.fixture(scope="module")
def verifier(sandbox_image: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS)


@pytest.mark.parametrize("candidate", OBJECTS, ids=[p.stem for p in OBJECTS])
def test_objects_by_handle(verifier: Verifier, candidate: Path) -> None:
    ev = verifier.check(candidate, HERE / "objects_suite")
    expected = expected_statuses(candidate)
    assert ev.status in expected, (ev.status, ev.reason, [(f.test_id, f.message) for f in ev.failures][:4])
    assert ev.ok is (expected == {Status.PASSED})
