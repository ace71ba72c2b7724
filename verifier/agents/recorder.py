"""The run recorder: every evaluation and every evidence-tool call, persisted and idempotent.

Where: `default_url()`, i.e. `$VERIFIER_RUNS_DB` (any SQLAlchemy URL, e.g. PostgreSQL for a
shared deployment), else the SQLite file `$XDG_STATE_HOME/verifier/runs.db`
(`~/.local/state/verifier/runs.db`). `verified_rubric`, the example and
`verifier runs report` all default to it.

Evaluations are keyed on (grading_run_id, iteration), tool calls on call_id, evidence on
evidence_id, so a redelivered callback writes nothing twice. Only verdicts on the candidate
are stored as evidence (`verifier.evidence.is_verdict`): an infra_error or overloaded run is
never served again in place of a verdict. An evidence record and its tool call are written
in one transaction. Each instance owns its engine; no globals.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.pool import StaticPool

from verifier.errors import VerifierError
from verifier.evidence import Evidence, is_verdict

ENV_URL = "VERIFIER_RUNS_DB"


def default_path() -> Path:
    """`$XDG_STATE_HOME/verifier/runs.db`, or `~/.local/state/verifier/runs.db`."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "verifier" / "runs.db"


def default_url() -> str:
    """`$VERIFIER_RUNS_DB` if set, else the SQLite file at `default_path()`."""
    return os.environ.get(ENV_URL) or f"sqlite:///{default_path()}"


class NoDatabase(VerifierError, FileNotFoundError):
    """The recorder database does not exist (and was not to be created)."""


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
    sa.Column("thread_id", sa.String(256), index=True),
    sa.Column("scope", sa.String(64)),
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
    sa.Column("thread_id", sa.String(256), index=True),
    sa.Column("scope", sa.String(64)),
    sa.Column("reason", sa.Text),
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
    """One call of an evidence tool.

    `grading_run_id` is set when the caller knows it (the LangGraph loop) or, for Deep
    Agents, when the grading pass's evaluation arrives: the calls of (scope, thread_id,
    iteration) are bound to that evaluation's run.
    """

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
    thread_id: str | None = None
    scope: str | None = None
    reason: str = ""


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


@dataclass(frozen=True)
class RunSummary:
    """One grading run as `verifier runs list` shows it."""

    grading_run_id: str
    thread_id: str | None
    scope: str | None
    rounds: int
    final_result: str
    tool_calls: int
    override: str | None
    started_at: float
    ended_at: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


class RunRecorder:
    """Persists evaluations, evidence and tool calls. Thread-safe; one engine per instance.

    Args:
        url: a SQLAlchemy URL; `default_url()` when None. "sqlite://" is in memory.
        create: create the database (and its folder) when missing; with False a missing
            SQLite file raises `NoDatabase` and nothing is created.
    """

    def __init__(self, url: str | None = None, *, create: bool = True) -> None:
        url = url or default_url()
        path = sqlite_file(url)
        if path is not None:
            if not path.exists() and not create:
                raise NoDatabase(f"no run database at {path}")
            path.parent.mkdir(parents=True, exist_ok=True)
        kwargs: dict[str, Any] = {}
        if url.startswith("sqlite") and path is None:
            kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        elif path is not None:
            kwargs = {"connect_args": {"check_same_thread": False, "timeout": 30}}
        self.url = url
        self.engine = sa.create_engine(url, **kwargs)
        _meta.create_all(self.engine)
        self._add_missing_columns()

    @property
    def display_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def _add_missing_columns(self) -> None:
        """Databases written by an older verifier lack the newer nullable columns: add them."""
        inspector = sa.inspect(self.engine)
        with self.engine.begin() as conn:
            for table in (evaluations_t, tool_calls_t):
                have = {c["name"] for c in inspector.get_columns(table.name)}
                for column in table.columns:
                    if column.name not in have and column.nullable:
                        kind = column.type.compile(dialect=self.engine.dialect)
                        conn.execute(sa.text(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))

    def _insert_ignore(self, conn: sa.Connection, table: sa.Table, row: Mapping[str, Any]) -> None:
        """Insert unless a row with the same key exists (idempotent redelivery), inside `conn`'s transaction."""
        name = self.engine.dialect.name
        if name == "sqlite":
            conn.execute(sqlite.insert(table).values(**row).on_conflict_do_nothing())
        elif name == "postgresql":
            conn.execute(postgresql.insert(table).values(**row).on_conflict_do_nothing())
        else:
            key = [c for c in table.primary_key.columns]
            found = conn.execute(sa.select(*key).where(*(c == row[c.name] for c in key))).first()
            if found is None:
                conn.execute(table.insert().values(**row))

    # -- writers -----------------------------------------------------------------
    def on_evaluation(
        self, evaluation: Mapping[str, Any], *, thread_id: str | None = None, scope: str | None = None
    ) -> None:
        """Record one RubricEvaluation; with `scope`, bind that pass's unbound tool calls to its run.

        The tool calls of a grading pass carry (scope, thread_id, iteration): the grading
        pass that `build_grader_state` opened for them. The pass's evaluation names the run.
        """
        run_id, iteration = str(evaluation["grading_run_id"]), int(evaluation["iteration"])
        with self.engine.begin() as conn:
            self._insert_ignore(
                conn,
                evaluations_t,
                {
                    "grading_run_id": run_id,
                    "iteration": iteration,
                    "result": str(evaluation["result"]),
                    "explanation": str(evaluation.get("explanation", "")),
                    "criteria": json.dumps(list(evaluation.get("criteria", [])), default=str),
                    "unverified": bool(evaluation.get("unverified", False)),
                    "thread_id": thread_id,
                    "scope": scope,
                    "recorded_at": time.time(),
                },
            )
            if scope is not None:
                conn.execute(
                    tool_calls_t.update()
                    .where(
                        tool_calls_t.c.scope == scope,
                        tool_calls_t.c.thread_id == thread_id
                        if thread_id is not None
                        else tool_calls_t.c.thread_id.is_(None),
                        tool_calls_t.c.iteration == iteration,
                        tool_calls_t.c.grading_run_id.is_(None),
                    )
                    .values(grading_run_id=run_id)
                )

    def record(self, evidence: Evidence, call: ToolCall) -> None:
        """One evidence-tool call and the evidence it returned, in one transaction.

        The evidence body is kept only when it is a verdict on the candidate; the call is
        always kept (its status counts in the tool error rate)."""
        now = time.time()
        with self.engine.begin() as conn:
            if is_verdict(evidence.status):
                self._insert_ignore(
                    conn,
                    evidence_t,
                    {
                        "evidence_id": evidence.evidence_id,
                        "candidate_sha256": evidence.candidate_sha256,
                        "ok": evidence.ok,
                        "status": evidence.status.value,
                        "body": evidence.model_dump_json(),
                        "recorded_at": now,
                    },
                )
            self._insert_ignore(conn, tool_calls_t, {**asdict(call), "recorded_at": now})

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
        """The stored verdict with this id (never an infra_error/overloaded record), or None."""
        with self.engine.connect() as conn:
            body = conn.execute(
                sa.select(evidence_t.c.body).where(evidence_t.c.evidence_id == evidence_id)
            ).scalar_one_or_none()
        if body is None:
            return None
        ev = Evidence.model_validate_json(body)
        return ev if is_verdict(ev.status) else None

    def latest_run(self, *, thread_id: str, scope: str | None = None) -> str | None:
        """The grading run of the last evaluation recorded for this thread (and scope)."""
        query = sa.select(evaluations_t.c.grading_run_id).where(evaluations_t.c.thread_id == thread_id)
        if scope is not None:
            query = query.where(evaluations_t.c.scope == scope)
        query = query.order_by(evaluations_t.c.recorded_at.desc(), evaluations_t.c.iteration.desc()).limit(1)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar_one_or_none()
        return None if found is None else str(found)

    def has_run(self, grading_run_id: str) -> bool:
        with self.engine.connect() as conn:
            return (
                conn.execute(
                    sa.select(evaluations_t.c.grading_run_id).where(evaluations_t.c.grading_run_id == grading_run_id)
                ).first()
                is not None
            )

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
                sa.select(tool_calls_t)
                .where(tool_calls_t.c.grading_run_id == grading_run_id)
                .order_by(tool_calls_t.c.recorded_at)
            ).mappings()
            return [ToolCall(**{k: v for k, v in row.items() if k != "recorded_at"}) for row in rows]

    def runs(self, limit: int | None = None) -> list[RunSummary]:
        """The recorded grading runs, the most recently evaluated first (at most `limit`)."""
        with self.engine.connect() as conn:
            evals = list(conn.execute(sa.select(evaluations_t).order_by(evaluations_t.c.iteration)).mappings())
            calls = conn.execute(
                sa.select(tool_calls_t.c.grading_run_id, sa.func.count())
                .where(tool_calls_t.c.grading_run_id.is_not(None))
                .group_by(tool_calls_t.c.grading_run_id)
            ).all()
            overrides = {r["grading_run_id"]: r["verdict"] for r in conn.execute(sa.select(overrides_t)).mappings()}
        counts = {str(run_id): int(n) for run_id, n in calls}
        grouped: dict[str, list[Mapping[str, Any]]] = {}
        for row in evals:
            grouped.setdefault(row["grading_run_id"], []).append(dict(row))
        summaries = [
            RunSummary(
                grading_run_id=run_id,
                thread_id=rows[-1]["thread_id"],
                scope=rows[-1]["scope"],
                rounds=rows[-1]["iteration"] + 1,
                final_result=rows[-1]["result"],
                tool_calls=counts.get(run_id, 0),
                override=overrides.get(run_id),
                started_at=min(float(r["recorded_at"]) for r in rows),
                ended_at=max(float(r["recorded_at"]) for r in rows),
            )
            for run_id, rows in grouped.items()
        ]
        summaries.sort(key=lambda s: (s.ended_at, s.grading_run_id), reverse=True)
        return summaries if limit is None else summaries[:limit]

    def override_of(self, grading_run_id: str) -> dict[str, Any] | None:
        """A person's verdict on the run (verdict, note, recorded_at), or None."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(sa.select(overrides_t).where(overrides_t.c.grading_run_id == grading_run_id))
                .mappings()
                .first()
            )
        return None if row is None else {k: row[k] for k in ("verdict", "note", "recorded_at")}

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
            tool_error_rate=(sum(c["status"] in ("infra_error", "overloaded") for c in calls) / len(calls))
            if calls
            else None,
            tool_latency_p50_s=_percentile(latencies, 50),
            tool_latency_p95_s=_percentile(latencies, 95),
            satisfied_runs=len(satisfied),
            overturned_satisfied=sum(
                1 for rid in satisfied if overrides.get(rid) not in (None, "satisfied", "accepted")
            ),
        )
