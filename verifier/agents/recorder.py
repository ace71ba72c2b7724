"""The run recorder: every evaluation and every evidence-tool call, persisted and idempotent.

Embedded default: a SQLite file; any SQLAlchemy URL (PostgreSQL) for shared deployments.
Evaluations are keyed on (grading_run_id, iteration), evidence on evidence_id, so a
redelivered callback writes nothing twice. Each instance owns its engine; no globals.
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool

from verifier.evidence import Evidence

DEFAULT_URL = "sqlite:///.verifier/runs.db"

_meta = sa.MetaData()
evaluations_t = sa.Table(
    "evaluations",
    _meta,
    sa.Column("grading_run_id", sa.String(64), primary_key=True),
    sa.Column("iteration", sa.Integer, primary_key=True),
    sa.Column("result", sa.String(32), nullable=False),
    sa.Column("explanation", sa.Text, nullable=False, default=""),
    sa.Column("criteria", sa.Text, nullable=False, default="[]"),
    sa.Column("unverified", sa.Boolean, nullable=False, default=False),
    sa.Column("recorded_at", sa.Float, nullable=False),
)
evidence_t = sa.Table(
    "evidence",
    _meta,
    sa.Column("evidence_id", sa.String(64), primary_key=True),
    sa.Column("candidate_sha256", sa.String(64), nullable=False, index=True),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.Float, nullable=False),
)
tool_calls_t = sa.Table(
    "tool_calls",
    _meta,
    sa.Column("call_id", sa.String(64), primary_key=True),
    sa.Column("grading_run_id", sa.String(64), index=True),
    sa.Column("iteration", sa.Integer),
    sa.Column("evidence_id", sa.String(64)),
    sa.Column("candidate_sha256", sa.String(64)),
    sa.Column("candidate_is_latest", sa.Boolean),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("cached", sa.Boolean, nullable=False, default=False),
    sa.Column("latency_s", sa.Float, nullable=False),
    sa.Column("recorded_at", sa.Float, nullable=False),
)
overrides_t = sa.Table(
    "overrides",
    _meta,
    sa.Column("grading_run_id", sa.String(64), primary_key=True),
    sa.Column("verdict", sa.String(32), nullable=False),
    sa.Column("note", sa.Text, nullable=False, default=""),
    sa.Column("recorded_at", sa.Float, nullable=False),
)


@dataclass(frozen=True)
class ToolCall:
    """One call of an evidence tool within a grading run."""

    grading_run_id: str | None
    iteration: int | None
    evidence_id: str
    candidate_sha256: str
    candidate_is_latest: bool | None
    ok: bool
    status: str
    cached: bool
    latency_s: float
    call_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class RunsReport:
    """The seed's offline metrics over every recorded grading run."""

    runs: int
    first_pass_rate: float | None
    final_pass_rate: float | None
    mean_grading_rounds: float | None
    terminal_status_share: dict[str, float]
    tool_calls: int
    tool_error_rate: float | None
    tool_latency_p50_s: float | None
    tool_latency_p95_s: float | None
    satisfied_runs: int
    overturned_satisfied: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


class RunRecorder:
    """Persists evaluations, evidence and tool calls. Thread-safe; one engine per instance."""

    def __init__(self, url: str = DEFAULT_URL) -> None:
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////:memory:"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        kwargs: dict[str, Any] = {}
        if url in ("sqlite://", "sqlite:///:memory:"):
            kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        elif url.startswith("sqlite"):
            kwargs = {"connect_args": {"check_same_thread": False, "timeout": 30}}
        self.url = url
        self.engine = sa.create_engine(url, **kwargs)
        _meta.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def _insert_once(self, table: sa.Table, row: Mapping[str, Any]) -> bool:
        try:
            with self.engine.begin() as conn:
                conn.execute(table.insert().values(**row))
            return True
        except IntegrityError:
            return False  # already recorded: idempotent by key

    # -- writers -----------------------------------------------------------------
    def on_evaluation(self, evaluation: Mapping[str, Any]) -> None:
        """RubricMiddleware's `on_evaluation` callback."""
        self._insert_once(
            evaluations_t,
            {
                "grading_run_id": str(evaluation["grading_run_id"]),
                "iteration": int(evaluation["iteration"]),
                "result": str(evaluation["result"]),
                "explanation": str(evaluation.get("explanation", "")),
                "criteria": json.dumps(list(evaluation.get("criteria", [])), default=str),
                "unverified": bool(evaluation.get("unverified", False)),
                "recorded_at": time.time(),
            },
        )

    def record(self, evidence: Evidence, call: ToolCall) -> None:
        """One evidence-tool call and the evidence it returned."""
        self._insert_once(
            evidence_t,
            {
                "evidence_id": evidence.evidence_id,
                "candidate_sha256": evidence.candidate_sha256,
                "ok": evidence.ok,
                "status": evidence.status.value,
                "body": evidence.model_dump_json(),
                "recorded_at": time.time(),
            },
        )
        self._insert_once(tool_calls_t, {**call.__dict__, "recorded_at": time.time()})

    def override(self, grading_run_id: str, verdict: str, note: str = "") -> None:
        """A person's verdict on a run (e.g. 'rejected' overturns a 'satisfied')."""
        with self.engine.begin() as conn:
            conn.execute(overrides_t.delete().where(overrides_t.c.grading_run_id == grading_run_id))
            conn.execute(
                overrides_t.insert().values(
                    grading_run_id=grading_run_id, verdict=verdict, note=note, recorded_at=time.time()
                )
            )

    # -- readers -----------------------------------------------------------------
    def evidence(self, evidence_id: str) -> Evidence | None:
        with self.engine.connect() as conn:
            body = conn.execute(
                sa.select(evidence_t.c.body).where(evidence_t.c.evidence_id == evidence_id)
            ).scalar_one_or_none()
        return None if body is None else Evidence.model_validate_json(body)

    def evaluations(self, grading_run_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(evaluations_t)
                .where(evaluations_t.c.grading_run_id == grading_run_id)
                .order_by(evaluations_t.c.iteration)
            ).mappings()
            return [{**row, "criteria": json.loads(row["criteria"])} for row in rows]

    def tool_calls(self, grading_run_id: str) -> list[ToolCall]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(tool_calls_t).where(tool_calls_t.c.grading_run_id == grading_run_id)
            ).mappings()
            return [ToolCall(**{k: v for k, v in row.items() if k != "recorded_at"}) for row in rows]

    def report(self) -> RunsReport:
        with self.engine.connect() as conn:
            evals = list(conn.execute(sa.select(evaluations_t).order_by(evaluations_t.c.iteration)).mappings())
            calls = list(conn.execute(sa.select(tool_calls_t)).mappings())
            overrides = {r["grading_run_id"]: r["verdict"] for r in conn.execute(sa.select(overrides_t)).mappings()}
        runs: dict[str, list[Mapping[str, Any]]] = {}
        for row in evals:
            runs.setdefault(row["grading_run_id"], []).append(dict(row))
        n = len(runs)
        finals = {rid: rows[-1]["result"] for rid, rows in runs.items()}
        firsts = [rows[0] for rows in runs.values() if rows[0]["iteration"] == 0]
        share: dict[str, float] = {}
        for result in finals.values():
            share[result] = share.get(result, 0.0) + 1 / n
        satisfied = [rid for rid, result in finals.items() if result == "satisfied"]
        latencies = sorted(float(c["latency_s"]) for c in calls)
        return RunsReport(
            runs=n,
            first_pass_rate=(sum(r["result"] == "satisfied" for r in firsts) / len(firsts)) if firsts else None,
            final_pass_rate=(len(satisfied) / n) if n else None,
            mean_grading_rounds=(sum(rows[-1]["iteration"] + 1 for rows in runs.values()) / n) if n else None,
            terminal_status_share={k: round(v, 6) for k, v in sorted(share.items())},
            tool_calls=len(calls),
            tool_error_rate=(sum(c["status"] == "infra_error" for c in calls) / len(calls)) if calls else None,
            tool_latency_p50_s=_percentile(latencies, 50),
            tool_latency_p95_s=_percentile(latencies, 95),
            satisfied_runs=len(satisfied),
            overturned_satisfied=sum(
                1 for rid in satisfied if overrides.get(rid) not in (None, "satisfied", "accepted")
            ),
        )
