from __future__ import annotations

from typing import Any

from verifier.agents.gate import decide
from verifier.agents.recorder import ToolCall
from verifier.hashing import sha256_bytes

V1, V2 = "def f(): return 1\n", "def f(): return 2\n"
RUN = "run-1"


def ev(iteration: int, result: str, run: str = RUN, unverified: bool = False) -> dict[str, Any]:
    return {"grading_run_id": run, "iteration": iteration, "result": result, "unverified": unverified}


def call(source: str, ok: bool = True, run: str = RUN, status: str = "passed") -> ToolCall:
    return ToolCall(
        grading_run_id=run,
        iteration=0,
        evidence_id=f"e-{source[-4:-1]}",
        candidate_sha256=sha256_bytes(source.encode()),
        candidate_is_latest=True,
        ok=ok,
        status=status,
        cached=False,
        latency_s=0.1,
    )


def test_accepts_satisfied_with_passing_evidence_for_the_final_bytes() -> None:
    d = decide([ev(0, "needs_revision"), ev(1, "satisfied")], [call(V1, ok=False, status="failed"), call(V2)], V2)
    assert d.accepted and d.verdict == "satisfied" and d.grading_run_id == RUN
    assert d.candidate_sha256 == sha256_bytes(V2.encode()) and d.evidence_id == call(V2).evidence_id


def test_rejections_each_with_a_reason() -> None:
    cases = {
        "no grader evaluation": decide([], [call(V2)], V2),
        "max_iterations_reached": decide([ev(0, "needs_revision"), ev(1, "max_iterations_reached")], [call(V2)], V2),
        "'failed'": decide([ev(0, "failed")], [call(V2)], V2),
        "grader_error": decide([ev(0, "grader_error")], [call(V2)], V2),
        "unverified": decide([ev(0, "satisfied", unverified=True)], [call(V2)], V2),
        "without calling the evidence tool": decide([ev(0, "satisfied")], [], V2),
        "stale evidence": decide([ev(0, "needs_revision"), ev(1, "satisfied")], [call(V1)], V2),
        "not ok (status infra_error)": decide([ev(0, "satisfied")], [call(V2, ok=False, status="infra_error")], V2),
        "no final candidate": decide([ev(0, "satisfied")], [call(V2)], None),
    }
    for words, decision in cases.items():
        assert not decision.accepted
        assert words in decision.reason, (words, decision.reason)


def test_evidence_from_another_run_does_not_count() -> None:
    d = decide([ev(0, "satisfied")], [call(V2, run="other-run")], V2)
    assert not d.accepted and "without calling" in d.reason


def test_the_last_run_is_judged_when_a_thread_has_several() -> None:
    evaluations = [ev(0, "satisfied", run="old"), ev(0, "needs_revision", run=RUN), ev(1, "max_iterations_reached")]
    assert not decide(evaluations, [call(V2, run="old")], V2).accepted


def test_a_missing_candidate_names_the_readers_reason_in_every_rejection() -> None:
    why = "the reply had no python block; use StateFile"
    satisfied = decide([ev(0, "satisfied")], [call(V2)], None, no_candidate_reason=why)
    revising = decide([ev(0, "max_iterations_reached")], [], None, no_candidate_reason=why)
    for d in (satisfied, revising):
        assert not d.accepted and "no final candidate" in d.reason and why in d.reason
