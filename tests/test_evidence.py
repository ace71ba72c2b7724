from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from verifier.evidence import Counts, Evidence, Failure, FailureKind, Status, evidence_json_schema
from verifier.limits import Limits


def make(**fields: object) -> Evidence:
    base: dict[str, object] = {
        "evidence_id": "e",
        "ok": False,
        "status": Status.FAILED,
        "reason": "r",
        "candidate_sha256": "c",
        "suite_sha256": "s",
        "image_id": "i",
        "limits": Limits(),
        "verifier_version": "0",
    }
    base.update(fields)
    return Evidence(**base)  # type: ignore[arg-type]


def test_ok_requires_every_collected_test_passed() -> None:
    make(ok=True, status=Status.PASSED, counts=Counts(expected=3, passed=3))
    for counts in (
        Counts(expected=0, passed=0),
        Counts(expected=3, passed=2, failed=1),
        Counts(expected=3, passed=3, skipped=1),
        Counts(expected=3, passed=3, errors=1),
    ):
        with pytest.raises(ValidationError):
            make(ok=True, status=Status.PASSED, counts=counts)


def test_ok_cannot_coexist_with_failures_or_other_status() -> None:
    failure = Failure(test_id="t", kind=FailureKind.ASSERTION, message="m")
    with pytest.raises(ValidationError):
        make(ok=True, status=Status.PASSED, counts=Counts(expected=1, passed=1), failures=[failure])
    with pytest.raises(ValidationError):
        make(ok=True, status=Status.TIMEOUT, counts=Counts(expected=1, passed=1))
    with pytest.raises(ValidationError):
        make(ok=False, status=Status.PASSED, counts=Counts(expected=1, passed=1))


def test_schema_is_published_and_names_the_statuses() -> None:
    schema = evidence_json_schema()
    text = json.dumps(schema)
    for status in Status:
        assert f'"{status.value}"' in text
    assert "candidate_sha256" in schema["properties"]
    assert schema["$schema"].endswith("2020-12/schema")


def test_evidence_is_frozen_and_round_trips() -> None:
    ev = make()
    with pytest.raises(ValidationError):
        ev.ok = True  # type: ignore[misc]
    assert Evidence.model_validate_json(ev.to_json()) == ev
