"""The evidence store: one JSON line per evidence, keyed by evidence_id, verdicts served again,
a torn last line dropped, any other bad line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.bench.store import EvidenceStore, store_path
from verifier.evidence import Evidence, Status
from verifier.limits import Limits


def evidence(ident: str, status: Status = Status.PASSED) -> Evidence:
    return Evidence(
        evidence_id=ident,
        ok=status is Status.PASSED,
        status=status,
        reason="r",
        candidate_sha256="c",
        suite_sha256="s",
        image_id="i",
        limits=Limits(),
        verifier_version="0",
        counts={"expected": 1, "passed": 1} if status is Status.PASSED else {"expected": 1, "failed": 1},
    )


def test_verdicts_are_served_again_and_marked_cached(tmp_path: Path) -> None:
    path = store_path(tmp_path / "samples.jsonl")
    assert path.name == "samples.jsonl_evidence.jsonl"
    with EvidenceStore(path) as store:
        store.add(evidence("a"))
        store.add(evidence("b", Status.FAILED))
        store.add(evidence("c", Status.INFRA_ERROR))  # kept for inspection, never served
    with EvidenceStore(path) as again:
        assert len(again) == 2 and again.lines == 3
        hit = again.get("a")
        assert hit is not None and hit.cached and hit.ok
        assert again.get("b") is not None and again.get("c") is None and again.get(None) is None
    with EvidenceStore(path, fresh=True) as fresh:
        assert len(fresh) == 0
    assert path.read_text() == ""


def test_a_torn_last_line_is_dropped_and_the_store_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    with EvidenceStore(path) as store:
        store.add(evidence("a"))
    whole = path.read_text()
    path.write_text(whole + evidence("b").to_json(indent=None)[:40])  # a crash in the middle of a write
    with EvidenceStore(path) as store:
        assert len(store) == 1 and store.get("b") is None
        store.add(evidence("c"))
    assert path.read_text().count("\n") == 2
    with EvidenceStore(path) as store:
        assert store.get("a") is not None and store.get("c") is not None


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    path.write_text(evidence("a").to_json(indent=None))
    with EvidenceStore(path) as store:
        store.add(evidence("b"))
    with EvidenceStore(path) as store:
        assert store.get("a") is not None and store.get("b") is not None


def test_a_bad_line_before_the_last_is_named(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    path.write_text("{}\n" + evidence("a").to_json(indent=None) + "\n")
    with pytest.raises(ValueError, match=r"store.jsonl:1: not an evidence record .*--no-cache"):
        EvidenceStore(path)
