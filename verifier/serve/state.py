"""What one server holds: its configuration, suites, tokens, principals' counts, evidence,
metrics and engine (no global state: `verifier.serve.app.create_app` makes one per app)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from verifier.serve.body import Refusal
from verifier.serve.coalesce import Coalescer
from verifier.serve.config import ServeConfig
from verifier.serve.engine import Engine
from verifier.serve.metrics import Metrics
from verifier.serve.quota import Clients
from verifier.serve.store import AnswerBudget, EvidenceStore, HeldBytes
from verifier.serve.tokens import TokenSource
from verifier.suite import Suite


@dataclass
class ServerState:
    """Everything one server holds."""

    config: ServeConfig
    suites: dict[str, Suite]
    tokens: TokenSource
    make_engine: Callable[[], Engine]
    clients: Clients = field(default_factory=Clients)
    store: EvidenceStore = field(init=False)
    answers: AnswerBudget = field(init=False)
    bodies: HeldBytes = field(init=False)
    coalescer: Coalescer = field(init=False)
    metrics: Metrics = field(init=False)
    engine: Engine | None = None
    stopping: bool = False

    def __post_init__(self) -> None:
        config = self.config
        self.store = EvidenceStore(
            config.evidence_kept,
            max_bytes=config.evidence_kept_bytes,
            max_bytes_per_owner=config.evidence_kept_bytes_per_token,
            output_chars=config.evidence_output_chars,
        )
        self.answers = AnswerBudget(max_bytes=config.answer_bytes, max_bytes_per_owner=config.answer_bytes_per_token)
        self.coalescer = Coalescer(config.run_code, self.running_engine)
        self.bodies = HeldBytes(max_bytes=config.http.body_held, max_bytes_per_owner=config.http.body_held_per_token)
        self.metrics = Metrics(
            waiting=lambda: self.engine.admission.waiting + self.engine.queued if self.engine else 0,
            holding=lambda: self.engine.admission.holding if self.engine else 0,
            in_flight=lambda: self.engine.in_flight if self.engine else 0,
            kept_bytes=lambda: self.store.bytes,
            unread_bytes=lambda: self.answers.bytes,
            body_bytes=lambda: self.bodies.bytes,
        )

    def running_engine(self) -> Engine:
        """The engine, or Refusal (503) once the server is stopping."""
        if self.engine is None or self.stopping:
            raise Refusal(503, "shutting_down", "the server is stopping", retry_after=self.config.retry_after_s)
        return self.engine
