"""The service's doors at unit level (issue 32, section 3), without a server or an engine: what the
evidence store keeps (bytes per principal and in all, large outputs cut with their hash), a
batch whose client stops reading (backpressure, not our memory), how the access log shows a path,
and the configuration of the connection budget. (tests/adversarial/test_serve_doors.py attacks a
real server.)"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from verifier.evidence import CaseOutcome, Counts, Evidence, Status
from verifier.inputs import Candidate
from verifier.limits import Limits
from verifier.serve.checks import _Item, batch_lines
from verifier.serve.config import HttpConfig, ServeConfig
from verifier.serve.middleware import redacted
from verifier.serve.state import ServerState
from verifier.serve.store import EvidenceStore
from verifier.serve.tokens import TokenSource, TokenSpec, token_hash
from verifier.suite import suite_from_files
from verifier.text import visible

TOKEN = "a-token-of-sixteen-chars"


def program_evidence(n: int, stdout: str, stderr: str = "") -> Evidence:
    case = CaseOutcome(name="run", status=Status.PASSED, message="ok", stdout_untrusted=stdout, stderr_untrusted=stderr)
    return Evidence(
        evidence_id=f"{n:064x}",
        ok=True,
        status=Status.PASSED,
        reason="every case passed",
        candidate_sha256="a" * 64,
        suite_sha256="b" * 64,
        image_id="sha256:img",
        counts=Counts(expected=1, passed=1),
        limits=Limits(),
        kind="program",
        cases=[case],
        verifier_version="0",
    )


# -- the evidence store -----------------------------------------------------------------------
def test_a_kept_evidence_holds_large_outputs_cut_with_the_hash_of_the_whole() -> None:
    store = EvidenceStore(100, output_chars=1000)
    out, err = "o" * 50_000, "é" * 50_000
    store.put("alice", program_evidence(1, out, err))
    kept = store.get("alice", f"{1:064x}")
    assert kept is not None and kept.ok and kept.status is Status.PASSED
    case = kept.cases[0]
    assert case.stdout_untrusted is not None and case.stderr_untrusted is not None
    assert case.stdout_untrusted.startswith("o" * 1000) and len(case.stdout_untrusted) < 1200
    assert hashlib.sha256(out.encode()).hexdigest() in case.stdout_untrusted
    assert hashlib.sha256(err.encode()).hexdigest() in case.stderr_untrusted
    assert "50000 characters" in case.stdout_untrusted
    short = program_evidence(2, "short")
    store.put("alice", short)
    assert store.get("alice", short.evidence_id) == short  # under the cut: the evidence itself


def test_the_store_is_bounded_in_bytes_per_principal_and_in_all() -> None:
    """Records of ~60 KB each (cut at 64 KiB): one principal never holds more than its bound, all
    together never more than theirs, and a principal's records push out its own first."""
    store = EvidenceStore(10_000, max_bytes=2_000_000, max_bytes_per_owner=600_000, output_chars=64 * 1024)
    for n in range(100):
        store.put("mallory", program_evidence(n, f"{n}" + "x" * 60_000))
        assert store.owner_bytes("mallory") <= 600_000
    store.put("alice", program_evidence(1000, "mine"))
    for n in range(100, 200):
        store.put(f"p{n % 5}", program_evidence(n, f"{n}" + "y" * 60_000))
        assert store.bytes <= 2_000_000
    assert store.get("mallory", f"{99:064x}") is not None or store.owner_bytes("mallory") == 0
    assert store.get("mallory", f"{0:064x}") is None  # its oldest went first
    assert len(store) < 60


def test_a_record_alone_over_a_bound_is_not_kept() -> None:
    store = EvidenceStore(10, max_bytes=10_000, max_bytes_per_owner=5_000, output_chars=64 * 1024)
    store.put("alice", program_evidence(1, "z" * 20_000))
    assert len(store) == 0 and store.bytes == 0


# -- a batch whose client stops reading ---------------------------------------------------------
class _Engine:
    """Stands for the engine's `check` only (this tests the batch's own logic): answers at once
    with a large evidence, counting the checks it started."""

    def __init__(self, line_chars: int) -> None:
        self.started = 0
        self.line_chars = line_chars

    async def check(self, candidate: Candidate, suite: object, purpose: str, on_done: object) -> Evidence:
        self.started += 1
        try:
            return program_evidence(self.started, "w" * self.line_chars)
        finally:
            on_done()  # type: ignore[operator]


def unread(state: ServerState) -> int:
    answers = getattr(state, "answers", None)  # (None on the code before the fix: the count then fails)
    return answers.bytes if answers is not None else 0


def test_a_batch_whose_client_stops_reading_stops_starting_checks(tmp_path: Path) -> None:
    """The client reads one line and stops: the batch starts checks only while the lines it has
    not read are under the token's bound (32 MiB by default), not all 150 of 512 KB each."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f'[[tokens]]\nname = "t"\nsha256 = "{token_hash(TOKEN)}"\nconcurrency = 4\nrate_per_s = 1e6\n')
    config = ServeConfig.model_validate({"tokens": str(tokens)})
    engine = _Engine(512 * 1024)
    state = ServerState(config=config, suites={}, tokens=TokenSource(tokens), make_engine=lambda: engine)  # type: ignore[arg-type,return-value]
    spec = TokenSpec.model_validate({"name": "t", "sha256": token_hash(TOKEN), "concurrency": 4, "rate_per_s": 1e6})
    suite = suite_from_files({"test_x.py": b"def test_x():\n    pass\n"}, "x")
    items = [_Item(f"i{n}", Candidate.from_text(f"x = {n}\n", label="c"), suite, "registered") for n in range(150)]
    client = state.clients.state(spec)
    assert client.charge(spec, len(items), 0.0)

    async def scenario() -> tuple[int, int, int]:
        lines = batch_lines(state, engine, spec, client, items)  # type: ignore[arg-type]
        first = await lines.__anext__()
        assert first.startswith('{"id":')
        for _ in range(2000):  # the checks answer at once: let every task that can run, run
            await asyncio.sleep(0)
        started, waiting = engine.started, unread(state)
        await lines.aclose()
        return started, waiting, unread(state)

    started, waiting, after = asyncio.run(scenario())
    bound = config.answer_bytes_per_token
    assert started < 100, f"{started} of 150 checks started for a client that read one line"
    assert waiting <= bound + (spec.concurrency + 1) * 600 * 1024
    assert after == 0  # what the client never read is given back when it goes


# -- the access log ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        f"//t/{TOKEN}/run_code",
        f"/./t/{TOKEN}/run_code",
        f"/t/{TOKEN};x/run_code",
        f"/x/../t/{TOKEN}/run_code",
        f"/v1/evidence/{TOKEN}",
        f"/T/{TOKEN}",
        f"{'p' * 290}/t/{TOKEN}/run_code",
        f"/t/{TOKEN}\n/run_code",
    ],
)
def test_no_path_shows_a_token(path: str) -> None:
    shown = redacted(path)
    assert TOKEN not in shown and TOKEN[:8] not in shown, shown
    assert "\n" not in shown and visible(shown) == shown


def test_a_path_cannot_write_a_line_or_drive_a_terminal() -> None:
    shown = redacted("/healthz\r\n127.0.0.1 GET /admin 200\x1b[31m\u202e")
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown and "\u202e" not in shown
    assert len(redacted("/" + "a/" * 5000)) < 400


# -- the connection budget -----------------------------------------------------------------------
def test_the_unauthenticated_budget_is_smaller_than_the_whole() -> None:
    assert HttpConfig().unauthenticated_budget == 250
    assert HttpConfig(max_connections=16).unauthenticated_budget == 4
    assert HttpConfig(body_timeout_s=3).send_timeout == 3
    with pytest.raises(ValidationError, match="smaller than max_connections"):
        HttpConfig(max_connections=10, unauthenticated_per_peer=10)
