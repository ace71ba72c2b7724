"""The fail-closed acceptance gate: accept only a `satisfied` verdict backed by passing
evidence, produced in the same grading run, for the exact bytes of the final candidate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from verifier.agents.recorder import ToolCall
from verifier.errors import InvalidInput
from verifier.inputs import candidate_from


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    accepted: bool
    reason: str
    verdict: str | None
    candidate_sha256: str | None
    evidence_id: str | None
    grading_run_id: str | None


def decide(
    evaluations: Sequence[Mapping[str, Any]],
    tool_calls: Iterable[ToolCall],
    final_candidate: str | Mapping[str, str] | None,
    *,
    grading_run_id: str | None = None,
    no_candidate_reason: str | None = None,
    reason_if_no_run: str = "no grader evaluation was recorded for this run",
) -> Decision:
    """Accept only when the last evaluation of the run is `satisfied` (and not unverified)
    and a tool call of the same run produced ok evidence for the final candidate's sha256.

    Args:
        evaluations: RubricEvaluation records (the `on_evaluation` callback's, or the recorder's).
        tool_calls: the evidence tool's calls; only those of `grading_run_id` count.
        final_candidate: the source the caller would accept (a folder: relative path -> text), or None.
        grading_run_id: the run to judge (default: the run of the last evaluation).
        no_candidate_reason: why there is no final candidate, for the rejection's reason.
        reason_if_no_run: the rejection's reason when there is no evaluation of the run.
    """
    if grading_run_id is None and evaluations:
        grading_run_id = str(evaluations[-1]["grading_run_id"])
    run = sorted((e for e in evaluations if e.get("grading_run_id") == grading_run_id), key=lambda e: e["iteration"])
    try:
        sha = candidate_from(final_candidate).sha256 if final_candidate is not None else None
    except InvalidInput as exc:  # a folder refused for its paths: no candidate to accept
        sha, no_candidate_reason = None, no_candidate_reason or str(exc)

    def reject(reason: str, verdict: str | None = None) -> Decision:
        if sha is None and no_candidate_reason and "no final candidate" not in reason:
            reason += f"; and there is no final candidate: {no_candidate_reason}"
        return Decision(
            accepted=False,
            reason=reason,
            verdict=verdict,
            candidate_sha256=sha,
            evidence_id=None,
            grading_run_id=grading_run_id,
        )

    if not run:
        return reject(reason_if_no_run)
    verdict = str(run[-1]["result"])
    if verdict != "satisfied":
        return reject(f"the last verdict is {verdict!r}, not 'satisfied'", verdict)
    if run[-1].get("unverified"):
        return reject("the 'satisfied' verdict was unverified (incomplete grading)", verdict)
    if sha is None:
        why = f": {no_candidate_reason}" if no_candidate_reason else ""
        return reject(f"there is no final candidate{why}", verdict)
    calls = [c for c in tool_calls if c.grading_run_id == grading_run_id]
    if not calls:
        return reject("the grader said 'satisfied' without calling the evidence tool in this run", verdict)
    passing = [c for c in calls if c.ok and c.candidate_sha256 == sha]
    if not passing:
        for_final = [c for c in calls if c.candidate_sha256 == sha]
        if for_final:
            return reject(f"evidence for the final candidate is not ok (status {for_final[-1].status})", verdict)
        return reject("stale evidence: no evidence in this run is for the final candidate's bytes", verdict)
    return Decision(
        accepted=True,
        reason="satisfied, with passing evidence for the final candidate in this run",
        verdict=verdict,
        candidate_sha256=sha,
        evidence_id=passing[-1].evidence_id,
        grading_run_id=grading_run_id,
    )
