"""The Prometheus metrics of one server (`GET /metrics`), in a registry of its own (no global
state: two servers in one process, as in tests, count apart)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from verifier.evidence import Evidence

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]

#: Seconds: from a warm HumanEval check (tens of ms) to a long suite (minutes).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class Metrics:
    def __init__(
        self,
        *,
        waiting: Callable[[], float],
        holding: Callable[[], float],
        in_flight: Callable[[], float],
        kept_bytes: Callable[[], float] = lambda: 0,
        unread_bytes: Callable[[], float] = lambda: 0,
        body_bytes: Callable[[], float] = lambda: 0,
    ):
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        waits = "Checks waiting for a machine-wide sandbox slot (at its door or in the server's queue)."
        queue = Gauge("verifier_serve_queue_length", waits, registry=r)
        queue.set_function(waiting)
        Gauge(
            "verifier_serve_running_sandboxes", "Sandbox slots this server holds (jobs running).", registry=r
        ).set_function(holding)
        Gauge(
            "verifier_serve_checks_in_flight", "Checks accepted and not finished (queued or running).", registry=r
        ).set_function(in_flight)
        Gauge(
            "verifier_serve_evidence_bytes", "Bytes of evidence kept for GET /v1/evidence (all tokens).", registry=r
        ).set_function(kept_bytes)
        Gauge(
            "verifier_serve_unread_answer_bytes",
            "Bytes of answers made and not yet read by their clients (batch lines, answers being sent).",
            registry=r,
        ).set_function(unread_bytes)
        Gauge(
            "verifier_serve_held_body_bytes",
            "Bytes of request bodies held by requests in progress (all tokens).",
            registry=r,
        ).set_function(body_bytes)
        self.checks = Counter(
            "verifier_serve_checks", "Checks answered, by route and evidence status.", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "verifier_serve_check_seconds",
            "A check from acceptance to its evidence (queue included).",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.queue = Histogram(
            "verifier_serve_queue_seconds", "A check's wait for a sandbox slot.", buckets=LATENCY_BUCKETS, registry=r
        )
        self.overloaded = Counter(
            "verifier_serve_overloaded",
            "Overload refusals: queue_full (max_in_flight reached), no_slot (no slot within queue_wait_s), "
            "busy_host (the run found the host too busy to judge).",
            ["reason"],
            registry=r,
        )
        self.refused = Counter(
            "verifier_serve_refused", "Requests refused before any check, by error code.", ["error"], registry=r
        )
        self.cancelled = Counter(
            "verifier_serve_batch_items_cancelled", "Batch items never started: their client went away.", registry=r
        )
        self.token_reloads = Counter(
            "verifier_serve_token_reloads", "Token file reads after a change, by result.", ["result"], registry=r
        )

    def checked(self, route: str, evidence: Evidence) -> None:
        self.checks.labels(route, evidence.status.value).inc()
        self.latency.labels(route).observe(evidence.durations.total_s)
        self.queue.observe(evidence.durations.queue_s)

    def render(self) -> bytes:
        return generate_latest(self.registry)
