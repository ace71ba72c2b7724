"""The serve wing's own logic, without a server or an engine: configuration, tokens, quotas, body
bounds, the SandboxFusion mapping, the evidence store, the client's retry rule."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from tests.conftest import SUITE
from verifier.client import _wait
from verifier.errors import HostOverloaded
from verifier.evidence import CaseOutcome, CompileInfo, Counts, Evidence, Failure, FailureKind, ProgramInfo, Status
from verifier.inputs import Candidate
from verifier.limits import Limits
from verifier.sandbox.admission import Admission
from verifier.serve import sandboxfusion
from verifier.serve.api import RunCodeRequest
from verifier.serve.body import Refusal, declared_length, read_body
from verifier.serve.config import ConfigError, HttpConfig, RunCodeConfig, load_config, load_suites
from verifier.serve.middleware import redacted
from verifier.serve.quota import Bucket, ClientState, seconds_to_utc_midnight
from verifier.serve.store import EvidenceStore, HeldBytes
from verifier.serve.tokens import TokenError, TokenSource, TokenSpec, parse_tokens, token_hash
from verifier.verify import Verifier

TOKEN = "a-token-of-sixteen-chars"


def spec(**settings: object) -> TokenSpec:
    return TokenSpec.model_validate({"name": "t", "sha256": token_hash(TOKEN), **settings})


# -- configuration --------------------------------------------------------------------------------
def test_a_configuration_resolves_its_paths_and_names_a_bad_key(tmp_path: Path) -> None:
    root = tmp_path / "roots" / "group" / "one"
    root.mkdir(parents=True)
    (root / "suite.toml").write_text('runner = "direct"\n')
    (root / "test_x.py").write_text("def test_x():\n    pass\n")
    path = tmp_path / "serve.toml"
    path.write_text(f'tokens = "t.toml"\n[suites]\nfd = "{SUITE}"\n[suite_roots]\nhe = "roots"\n')
    config = load_config(path)
    assert config.tokens == tmp_path / "t.toml" and config.host == "127.0.0.1"
    assert sorted(load_suites(config)) == ["fd", "he/group/one"]
    for text, words in (
        ('tokens = "t"\nbogus = 1\n', "unknown key 'bogus'"),
        ('tokens = "t"\n[pool]\npolicy = "fresh"\n', "pool.policy"),
        ('tokens = "t"\n[suites]\n"bad name" = "x"\n', "not a suite name"),
        ('tokens = "t"\nqueue_wait_s = -1\n', "queue_wait_s"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError, match=words):
            load_config(path)
    path.write_text(f'tokens = "t"\n[suites]\nmissing = "{tmp_path / "nowhere"}"\n')
    with pytest.raises(ConfigError, match="suite 'missing'"):
        load_suites(load_config(path))


# -- tokens ---------------------------------------------------------------------------------------
def test_tokens_are_found_by_their_hash_only() -> None:
    book = parse_tokens(f'[[tokens]]\nname = "a"\nsha256 = ["{token_hash(TOKEN)}"]\nsuites = ["fd", "he/*"]\n', "f")
    found = book.find(TOKEN)
    assert found is not None and found.name == "a" and found.may_use("he/HumanEval/3") and not found.may_use("x")
    assert book.find("another-token-of-16+") is None
    assert book.find("short") is None and book.find("spaces in a token!!") is None
    assert TOKEN not in repr(book)  # only hashes are held


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[[tokens]]\nname = "a"\nsha256 = "abc"\n', "64 lower-case hex"),
        (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\nextra = 1\n', "unknown key"),
        (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\n[[tokens]]\nname = "a"\nsha256 = "{"1" * 64}"\n', "twice"),
        (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\n[[tokens]]\nname = "b"\nsha256 = "{"0" * 64}"\n', "also"),
    ],
)
def test_a_bad_token_file_is_refused_naming_the_key(text: str, words: str) -> None:
    with pytest.raises(TokenError, match=words):
        parse_tokens(text, "tokens.toml")


def test_the_token_file_is_read_again_when_it_changes_and_a_broken_one_is_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(f'[[tokens]]\nname = "a"\nsha256 = "{token_hash(TOKEN)}"\n')
    source = TokenSource(path)
    assert not source.reload_if_changed()
    new = "the-next-token-0123456789"
    path.write_text(f'[[tokens]]\nname = "a"\nsha256 = "{token_hash(new)}"\n')
    assert source.reload_if_changed() and source.book.find(new) is not None and source.book.find(TOKEN) is None
    path.write_text("[[tokens]\n")
    with pytest.raises(TokenError):
        source.reload_if_changed()
    assert not source.reload_if_changed()  # reported once, not at every look
    assert source.book.find(new) is not None  # the last good book stays


# -- quotas ---------------------------------------------------------------------------------------
def test_the_rate_bucket_allows_a_burst_then_the_rate() -> None:
    rules = spec(rate_per_s=2.0, burst=3)
    bucket = Bucket()
    assert [bucket.take(rules, 100.0, reserve=False) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(rules, 100.0, reserve=False) == pytest.approx(0.5)
    assert bucket.take(rules, 100.5, reserve=False) == 0.0  # half a second later: one more
    assert bucket.take(rules, 100.5, reserve=True) == pytest.approx(0.5)  # reserved: taken, wait
    assert bucket.take(rules, 100.5, reserve=True) == pytest.approx(1.0)


def test_the_daily_quota_counts_refunds_and_starts_again_each_utc_day() -> None:
    rules = spec(daily_quota=3)
    client = ClientState("t")
    day = 86400 * 20000.0
    assert client.charge(rules, 2, day + 10) and not client.charge(rules, 2, day + 20)
    client.refund(1)
    assert client.charge(rules, 2, day + 30) and not client.charge(rules, 1, day + 40)
    assert client.charge(rules, 3, day + 86400)  # the next day
    assert seconds_to_utc_midnight(day + 86400 - 5) == 5


def test_concurrency_counts_and_waits() -> None:
    rules = spec(concurrency=1)
    client = ClientState("t")

    async def scenario() -> list[str]:
        order = []
        assert client.try_start(rules) and not client.try_start(rules)

        async def second() -> None:
            await client.start(rules)
            order.append("second started")
            client.done()

        waiter = asyncio.create_task(second())
        await asyncio.sleep(0.05)
        order.append("first done")
        client.done()
        await asyncio.wait_for(waiter, 5)
        return order

    assert asyncio.run(scenario()) == ["first done", "second started"]
    assert client.running == 0


def test_waiting_checks_start_in_arrival_order_one_wake_up_each() -> None:
    """A batch's items wait in arrival order; each check that ends wakes one of them (not all),
    and a waiter cancelled after its wake-up passes its turn on."""
    rules = spec(concurrency=2)
    client = ClientState("t")

    async def scenario() -> list[int]:
        order: list[int] = []
        await client.start(rules)
        await client.start(rules)

        async def item(n: int) -> None:
            await client.start(rules)
            order.append(n)

        waiting = [asyncio.create_task(item(n)) for n in range(5)]
        await asyncio.sleep(0.01)
        assert order == [] and len(client.waiters) == 5
        client.done()
        waiting[1].cancel()  # cancelled before its turn: never counted
        await asyncio.sleep(0.01)
        assert order == [0]
        client.done()
        await asyncio.sleep(0.01)
        assert order == [0, 2]
        client.done()
        client.done()
        await asyncio.sleep(0.01)
        return order

    assert asyncio.run(scenario()) == [0, 2, 3, 4]
    assert client.running == 2 and not client.waiters


# -- bodies ---------------------------------------------------------------------------------------
def test_a_body_is_bounded_in_size_and_time() -> None:
    async def chunks(parts: list[bytes], pause: float) -> AsyncIterator[bytes]:
        for part in parts:
            await asyncio.sleep(pause)
            yield part

    assert asyncio.run(read_body(chunks([b"ab", b"c"], 0), max_bytes=3, timeout_s=5)) == b"abc"
    with pytest.raises(Refusal) as big:
        asyncio.run(read_body(chunks([b"ab", b"cd"], 0), max_bytes=3, timeout_s=5))
    assert big.value.status == 413
    started = time.monotonic()
    with pytest.raises(Refusal) as slow:
        asyncio.run(read_body(chunks([b"a"] * 100, 0.1), max_bytes=1000, timeout_s=0.5))
    assert slow.value.status == 408 and time.monotonic() - started < 5
    with pytest.raises(Refusal) as declared:
        declared_length("5000", 1000)
    assert declared.value.status == 413
    declared_length(None, 1000)


def test_a_url_token_never_reaches_a_log_line() -> None:
    assert redacted(f"/t/{TOKEN}/run_code") == "/t/<token>/run_code"
    assert redacted("/v1/check") == "/v1/check"


# -- the evidence store -----------------------------------------------------------------------------
def closed(reason: str, sha: str = "") -> Evidence:
    return Verifier(limits=Limits()).fail_closed(Status.INFRA_ERROR, reason, candidate_sha256=sha)


def test_the_store_keeps_each_principals_own_and_forgets_the_oldest() -> None:
    store = EvidenceStore(2)
    first, second, third = closed("1", "a" * 64), closed("2", "b" * 64), closed("3", "c" * 64)
    store.put("alice", first)
    store.put("alice", second)
    assert store.get("bob", first.evidence_id) is None and store.get("alice", first.evidence_id) == first
    store.put("alice", third)
    assert store.get("alice", first.evidence_id) is None and len(store) == 2


# -- SandboxFusion ------------------------------------------------------------------------------
def test_run_code_requests_become_one_case_program_suites() -> None:
    config = RunCodeConfig(max_memory_mb=512, max_run_timeout_s=30)
    request = RunCodeRequest(code="print(input())", stdin="hi\n", language="python", run_timeout=3, memory_limit_MB=64)
    candidate, suite = sandboxfusion.program(request, config)
    assert candidate.source == b"print(input())" and suite.kind == "program" and suite.program is not None
    assert suite.program.compare == "none" and suite.program.time_limit_s == 3
    assert suite.program.memory_bytes == 64 * 1024**2
    default = sandboxfusion.program(request.model_copy(update={"memory_limit_MB": -1}), config)[1]
    assert default.program is not None and default.program.memory_bytes == 512 * 1024**2
    for update, words in (
        ({"language": "php"}, "not supported: this server runs python, python3, c, cpp, java"),
        ({"language": "cpp", "files": {"a.txt": "eA=="}}, "files are not supported with cpp"),
        ({"fetch_files": ["/etc/passwd"]}, "fetch_files: '/etc/passwd' is an absolute path"),
        ({"fetch_files": ["a/../b"]}, "fetch_files: "),
        ({"fetch_files": [f"f{n}" for n in range(33)]}, "at most 32"),
        ({"files": {"../up.txt": "eA=="}}, "files: "),  # a path candidate folders may not hold
        ({"files": {"a.txt": "not base64!"}}, "not base64"),
        ({"files": {"solution.py": "eA=="}}, "the program's own file"),
        ({"files": {f"f{n}.txt": "eA==" for n in range(101)}}, "at most 100"),
        ({"args": ["-x"]}, "args is not supported"),
        ({"memory_limit_MB": 513}, "memory_limit_MB"),
    ):
        with pytest.raises(Refusal, match=words):
            sandboxfusion.program(request.model_copy(update=update), config)
    # fetch_files go into the suite as its [program] fetch_files, each path once, in order
    fetching = sandboxfusion.program(
        request.model_copy(update={"fetch_files": ["b.txt", "dir/é.bin", "b.txt"]}), config
    )
    assert fetching[1].program is not None and fetching[1].program.fetch_files == ("b.txt", "dir/é.bin")
    # past the server's limit: the program gets the limit (and TimeLimitExceeded if it runs past it)
    longest = sandboxfusion.program(request.model_copy(update={"run_timeout": 31}), config)[1]
    assert longest.program is not None and longest.program.time_limit_s == 30
    # Python's suite names no language (its evidence ids as before); others name theirs
    assert suite.program.language is None
    for asked, named in (("cpp", "cpp"), ("javascript", "nodejs"), ("java", "java"), ("bash", "bash")):
        other = sandboxfusion.program(request.model_copy(update={"language": asked}), config)[1]
        assert other.program is not None and other.program.language == named
    # compile_timeout: the compile step's limit, past the server's limit that limit; none when interpreted
    cpp = request.model_copy(update={"language": "cpp", "compile_timeout": 7.5})
    assert sandboxfusion.program(cpp, config)[1].program.compile_timeout_s == 7.5  # type: ignore[union-attr]
    capped = sandboxfusion.limits_of(cpp.model_copy(update={"compile_timeout": 1e6}), config)
    assert capped.compile_timeout_s == config.max_compile_timeout_s and capped.language == "cpp"
    assert sandboxfusion.limits_of(request.model_copy(update={"language": "nodejs"}), config).compile_timeout_s == 0
    with pytest.raises(Refusal, match="compile_timeout 0"):
        sandboxfusion.limits_of(cpp.model_copy(update={"compile_timeout": 0}), config)
    # an interpreted language's compile_timeout is SandboxFusion's: ignored, whatever it is
    assert sandboxfusion.limits_of(request.model_copy(update={"compile_timeout": 0}), config).language == "python"
    # the same code as C and as C++ are two programs (never one coalesced job)
    assert sandboxfusion.limits_of(cpp, config) != sandboxfusion.limits_of(
        cpp.model_copy(update={"language": "c"}), config
    )


def program_evidence(case: CaseOutcome, status: Status) -> Evidence:
    base = closed("x").model_dump()
    passed = status is Status.PASSED
    counts = Counts(expected=1, passed=int(passed), failed=int(not passed))
    base.pop("fault")  # derived from the status
    fields = {"status": status, "ok": passed, "reason": "r", "kind": "program", "cases": [case], "counts": counts}
    return Evidence.model_validate({**base, **fields})


def test_evidence_becomes_what_sandboxfusion_answers() -> None:
    done = CaseOutcome(
        name="run", status=Status.PASSED, message="m", exit_code=0, stdout_untrusted="42\n", time_s=0.25, wall_s=1.5
    )
    status, answer = sandboxfusion.response(program_evidence(done, Status.PASSED))
    assert status == 200 and answer.status == "Success" and answer.run_result is not None
    assert answer.run_result.stdout == "42\n" and answer.run_result.return_code == 0
    assert answer.run_result.execution_time == 1.5  # wall time, as SandboxFusion's (charged: the evidence's)
    assert answer.compile_result is None  # SandboxFusion's Python has no compile step
    killed = CaseOutcome(name="run", status=Status.ERROR, message="m", signal=11, stdout_untrusted="")
    _, answer = sandboxfusion.response(program_evidence(killed, Status.ERROR))
    assert answer.status == "Failed" and answer.run_result is not None and answer.run_result.return_code == -11
    slow = CaseOutcome(name="run", status=Status.TIMEOUT, message="m", stdout_untrusted="")
    _, answer = sandboxfusion.response(program_evidence(slow, Status.TIMEOUT))
    assert answer.run_result is not None and answer.run_result.status == "TimeLimitExceeded"
    assert answer.run_result.return_code is None and answer.status == "Failed"
    busy = Verifier(limits=Limits()).fail_closed(Status.OVERLOADED, "busy")
    status, answer = sandboxfusion.response(busy)
    assert status == 504 and answer.status == "SandboxError"  # the one status verl retries
    status, answer = sandboxfusion.response(closed("our sandbox failed"))
    assert status == 200 and answer.status == "SandboxError" and answer.message == "our sandbox failed"


# -- machine-wide slots and the client --------------------------------------------------------------
def test_closing_the_admission_ends_every_wait_at_once(tmp_path: Path) -> None:
    admission = Admission(1, wait_s=600, folder=tmp_path)
    outcome: list[BaseException] = []

    def wait_for_a_slot() -> None:
        try:
            with admission.slot():
                pass
        except HostOverloaded as exc:
            outcome.append(exc)

    with Admission(1, folder=tmp_path).slot():
        waiter = threading.Thread(target=wait_for_a_slot)
        waiter.start()
        time.sleep(0.3)
        started = time.monotonic()
        admission.close()
        waiter.join(10)
    assert outcome and "shutting down" in str(outcome[0]) and time.monotonic() - started < 5


def test_the_client_waits_what_the_server_asks_and_no_longer_than_it_may() -> None:
    def answer(status: int, retry_after: str | None = None) -> httpx.Response:
        return httpx.Response(status, headers={"Retry-After": retry_after} if retry_after else {})

    assert _wait(answer(503, "2"), 0, 3, 60) == 2.0
    assert _wait(answer(429, "5"), 2, 3, 60) == 5.0
    assert _wait(answer(429, "40000"), 0, 3, 60) is None  # a spent quota: hours away
    assert _wait(answer(503, "2"), 3, 3, 60) is None  # retries spent
    assert _wait(answer(403), 0, 3, 60) is None and _wait(answer(200), 0, 3, 60) is None


def test_the_core_and_the_wire_format_import_none_of_the_serve_extra() -> None:
    code = (
        "import sys, verifier, verifier.verify, verifier.cli, verifier.serve, verifier.serve.api\n"
        "loaded = sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'prometheus_client', 'httpx') "
        "if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_command_fails_in_one_line_naming_the_option(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from verifier.cli import app

    missing = CliRunner().invoke(app, ["serve", "--config", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "--config" in missing.output and "Traceback" not in missing.output
    bad = tmp_path / "serve.toml"
    bad.write_text('tokens = "t.toml"\nport = "eighty"\n')
    wrong = CliRunner().invoke(app, ["serve", "--config", str(bad)])
    assert wrong.exit_code == 2 and "port" in wrong.output and "Traceback" not in wrong.output
    helped = CliRunner().invoke(app, ["serve", "--help"])
    assert helped.exit_code == 0 and "127.0.0.1" in helped.output


# -- bytes held by requests in progress --------------------------------------------------------
def test_held_bytes_are_bounded_per_owner_then_in_all_and_given_back() -> None:
    held = HeldBytes(max_bytes=250, max_bytes_per_owner=100)
    a, b = held.lease("a"), held.lease("a")
    assert a.grow(60) is None and b.grow(40) is None
    assert b.grow(1) == "owner" and held.owner_bytes("a") == 100  # nothing counted when refused
    others = [held.lease(name) for name in ("b", "c")]
    assert all(lease.grow(70) is None for lease in others)
    assert held.lease("d").grow(11) == "all" and held.bytes == 240
    a.release()
    a.release()  # once only
    assert held.owner_bytes("a") == 40 and held.bytes == 180
    b.release()
    assert held.owner_bytes("a") == 0 and held.lease("d").grow(70) is None


async def chunks(parts: list[bytes], pause: float) -> AsyncIterator[bytes]:
    for part in parts:
        await asyncio.sleep(pause)
        yield part


def test_read_body_tells_each_piece_before_keeping_it() -> None:
    told: list[int] = []

    def hold(size: int) -> None:
        told.append(size)
        if sum(told) > 3:
            raise Refusal(429, "concurrency", "over")

    assert asyncio.run(read_body(chunks([b"ab", b"c"], 0), max_bytes=10, timeout_s=5, hold=hold)) == b"abc"
    told.clear()
    with pytest.raises(Refusal) as refused:
        asyncio.run(read_body(chunks([b"ab", b"cd"], 0), max_bytes=10, timeout_s=5, hold=hold))
    assert refused.value.status == 429 and told == [2, 2]


def test_the_bodies_held_default_to_bodies_and_are_checked() -> None:
    http = HttpConfig(max_body_bytes=2000)
    assert (http.body_held_per_token, http.body_held) == (8000, 32000)
    assert HttpConfig(max_body_bytes=1024, max_body_bytes_held_per_token=20000).body_held == 20000
    with pytest.raises(ValidationError, match="at least max_body_bytes"):
        HttpConfig(max_body_bytes=4096, max_body_bytes_held_per_token=2048)
    with pytest.raises(ValidationError, match="at least max_body_bytes_held_per_token"):
        HttpConfig(max_body_bytes=1024, max_body_bytes_held_per_token=4096, max_body_bytes_held=2048)
    assert Refusal(429, "concurrency", "x", close=True).close and Refusal(413, "too_large", "x").close
    assert not Refusal(429, "concurrency", "x").close


# -- /run_code's files: the candidate folders' path rule, not a second one -----------------------
@pytest.mark.parametrize(
    "path",
    [
        "data.txt",
        "d/e/f.txt",
        "./solution.py",
        "a/../solution.py",
        "/etc/passwd",
        "a//b",
        "x/",
        "",
        "a\\b",
        "a\x00b",
        "__pycache__/m.cpython-311.pyc",
        "SOLUTION.PY",
        "solution.py/x",
        "n" * 300,
        "\u202egnp.py",
    ],
)
def test_run_code_files_follow_the_candidate_folders_rule(path: str) -> None:
    from verifier.runner.trees import tree_problem

    request = RunCodeRequest(code="print(1)", language="python", files={path: "eA=="})
    problem = tree_problem([sandboxfusion.PROGRAM_FILE, path])
    if problem is None:
        assert sandboxfusion.program(request, RunCodeConfig())[0].files is not None
    else:
        with pytest.raises(Refusal) as refused:
            sandboxfusion.program(request, RunCodeConfig())
        assert refused.value.status == 400 and problem[0] in refused.value.reason


# -- /run_code requests sharing a job: the bookkeeping (the real runs: test_serve_coalesce) --------
class _GatedEngine:
    """Stands in for the server's engine (our own logic is tested): every check waits for the
    gate, then answers one case per stdin, `skip` cases as not run."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.free_workers = 0
        self.jobs: list[list[str]] = []

    async def check(self, candidate: object, suite: object, purpose: str, on_done: Any = lambda: None) -> Evidence:
        try:
            await self.gate.wait()
            built = suite if not callable(suite) else suite()
            stdins = [json.loads(line)["input"] for line in built.files["cases.jsonl"].splitlines()]
            self.jobs.append(stdins)
            cases = [
                CaseOutcome(
                    name=f"run-{n}",
                    status=Status.PASSED if stdin != "skip" else Status.TIMEOUT,
                    message="m",
                    ran=stdin != "skip",
                    exit_code=0,
                    stdout_untrusted=stdin,
                )
                for n, stdin in enumerate(stdins)
            ]
            passed = all(c.ran for c in cases)
            base = program_evidence(cases[0], Status.PASSED if passed else Status.TIMEOUT).model_dump()
            counts = Counts(expected=len(cases), passed=sum(c.ran for c in cases), failed=sum(not c.ran for c in cases))
            fields = {"cases": [c.model_dump() for c in cases], "counts": counts}
            return Evidence.model_validate({**base, **fields})
        finally:
            on_done()


def test_requests_for_one_program_share_a_job_and_give_their_counts_back(tmp_path: Path) -> None:
    from verifier.serve.coalesce import Coalescer
    from verifier.serve.config import ServeConfig
    from verifier.serve.state import ServerState

    config = ServeConfig(tokens=tmp_path / "tokens.toml")
    state = ServerState(config=config, suites={}, tokens=None, make_engine=lambda: None)  # type: ignore[arg-type]
    engine = _GatedEngine()
    state.engine = engine  # type: ignore[assignment]
    coalescer: Coalescer = state.coalescer
    rules = spec(concurrency=10, run_code=True)
    client = state.clients.state(rules)
    candidate = Candidate.from_text("print(input())\n", label="c")
    limits = sandboxfusion.ProgramLimits(5.0, 256)

    async def scenario() -> tuple[list[tuple[Evidence, int]], list[str]]:
        async def one(stdin: str) -> tuple[Evidence, int]:
            assert client.try_start(rules)
            return await coalescer.run(rules, client, candidate, stdin, limits, lambda *_: None)

        tasks = [asyncio.create_task(one(s)) for s in ("a", "b", "skip", "c", "gone")]
        for _ in range(20):
            await asyncio.sleep(0)
        tasks[4].cancel()  # its client goes away before the job starts: it leaves the group
        for _ in range(20):
            await asyncio.sleep(0)
        engine.gate.set()
        done = await asyncio.gather(*tasks[:4])
        gone = await asyncio.gather(tasks[4], return_exceptions=True)
        assert isinstance(gone[0], asyncio.CancelledError)
        return done, [e.cases[i].stdout_untrusted or "" for e, i in done]

    done, outputs = asyncio.run(scenario())
    assert outputs == ["a", "b", "skip", "c"]
    assert engine.jobs[0] == ["a", "b", "skip", "c"]  # one job for the four that stayed
    assert engine.jobs[1:] == [["skip"]]  # the case it did not run, run again alone
    assert done[0][0].evidence_id == done[1][0].evidence_id and done[2][1] == 0
    assert client.running == 0 and not coalescer._open  # every count given back, no group left


def compile_evidence(step: CompileInfo, said: str, cases: int) -> Evidence:
    """A program in C++ that did not compile (`step`, the compiler's words `said`), in a job of `cases`."""
    base = closed("x").model_dump()
    base.pop("fault")  # derived from the status
    outcomes = [
        CaseOutcome(name=f"run-{n}", status=Status.COMPILE_ERROR, message="not run", ran=False) for n in range(cases)
    ]
    failure = Failure(test_id="<compile>", kind=FailureKind.COMPILE_ERROR, message=step.message, detail_untrusted=said)
    fields = {
        "status": Status.COMPILE_ERROR,
        "ok": False,
        "reason": step.message,
        "kind": "program",
        "cases": outcomes,
        "counts": Counts(expected=cases, failed=cases),
        "failures": [failure],
        "program": ProgramInfo(language="cpp", toolchain=["g++=12"], compile=step),
    }
    return Evidence.model_validate({**base, **fields})


def test_a_compile_step_becomes_sandboxfusions_compile_result() -> None:
    """SandboxFusion's `run_commands`: a compile that failed is `compile_result` (Finished and the
    compiler's code, or TimeLimitExceeded with none) and no run; every request of a coalesced job
    gets it (the same program)."""
    error = CompileInfo(ok=False, message="the program did not compile: the compiler exited with code 1", exit_code=1)
    slow = CompileInfo(ok=False, message="the program did not compile within the 0.1 s compile time limit", wall_s=2)
    memory = CompileInfo(ok=False, message="the compiler used more than its 256 MiB memory limit", signal=9)
    for step, status, code in ((error, "Finished", 1), (slow, "TimeLimitExceeded", None), (memory, "Finished", -9)):
        for cases, index in ((1, 0), (3, 2)):
            http, answer = sandboxfusion.case_response(
                compile_evidence(step, "main.cpp:1: error: x", cases), index, "int main( {", "cpp"
            )
            assert http == 200 and answer.status == "Failed" and answer.run_result is None, answer
            assert answer.compile_result is not None and answer.compile_result.status == status
            assert answer.compile_result.return_code == code and answer.compile_result.stderr == "main.cpp:1: error: x"
            assert answer.compile_result.execution_time == step.wall_s and answer.message == step.message
