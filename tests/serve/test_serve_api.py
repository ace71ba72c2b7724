"""`verifier serve` through a real server process on 127.0.0.1 (one for this module), on the real
engine: checks, evidence, who may do what, the bounds of a request, batches, /run_code. Nothing
of the engine is mocked; raw sockets play the slow and oversized clients."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.mutants import mutate
from tests.conftest import EXAMPLE, QUICK_SUITE, ROOT, SETTLE_ATTEMPTS
from tests.serve.server import SLEEPY_SUITE, Served, make_token, start
from verifier.bench import humaneval as he
from verifier.client import AsyncClient, Client
from verifier.evidence import Evidence, Fault, Status
from verifier.hashing import tree_sha256
from verifier.serve.api import BatchLine
from verifier.serve.tokens import token_hash
from verifier.suite import load_suite

#: One server for the module, so one worker runs it (xdist would otherwise start one per worker).
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("serve-api")]

PROBLEMS = he.load_problems()
#: Ten tasks, among them ones whose check uses the prompt's helpers (32: poly) or calls the
#: function by name (33).
HUMANEVAL_TASKS = [f"HumanEval/{n}" for n in (0, 2, 7, 12, 32, 33, 53, 101, 120, 163)]
GOOD = (EXAMPLE / "good.py").read_text()
WRONG = (EXAMPLE / "wrong" / "always_equal.py").read_text()
EVERYTHING = {"suites": ["*"], "inline_suites": True, "run_code": True, "concurrency": 8, "rate_per_s": 1000.0}


def sleeper(seconds: float) -> str:
    return f"import time\n\n\ndef value():\n    time.sleep({seconds})\n    return 1\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-api")
    tokens: dict[str, tuple[str, dict[str, Any]]] = {
        "alice": (make_token(), {**EVERYTHING, "burst": 1000}),
        "bob": (make_token(), {"suites": ["quick"]}),
        "quota2": (make_token(), {"suites": ["sleepy"], "daily_quota": 2}),
        "slow": (make_token(), {"suites": ["sleepy"], "rate_per_s": 0.01, "burst": 1}),
        "single": (make_token(), {"suites": ["sleepy"], "concurrency": 1}),
        "carol": (make_token(), {"suites": ["sleepy"]}),
    }
    humaneval = folder / "humaneval"
    he.write_suites(humaneval, {t: PROBLEMS[t] for t in HUMANEVAL_TASKS})
    config = f"""
policy = "reuse"
token_reload_s = 0.2
[pool]
size = 2
[http]
body_timeout_s = 2
header_timeout_s = 2
max_body_bytes = 1000000
max_header_bytes = 8192
[run_code]
max_memory_mb = 256
[suites]
quick = "{QUICK_SUITE}"
sleepy = "{SLEEPY_SUITE}"
[suite_roots]
humaneval = "{humaneval}"
"""
    # Slots of its own: this module tests the server (order, limits), not the machine's queue,
    # which other test processes share (test_serve_lifecycle.py tests that one).
    slots = folder / "slots"
    server = start(folder, config, tokens, env={"VERIFIER_SLOTS_DIR": str(slots), "VERIFIER_MAX_SANDBOXES": "2"})
    try:
        yield server
    finally:
        server.stop()


def post(served: Served, who: str | None, path: str, body: Any, **kwargs: Any) -> httpx.Response:
    token = served.tokens[who] if who else None
    with served.client(token) as client:
        return client.post(path, json=body, **kwargs)


def evidence_of(response: httpx.Response) -> Evidence:
    return Evidence.model_validate_json(response.content)


def metric(served: Served, name: str) -> float:
    text = httpx.get(served.url + "/metrics", timeout=30).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


# -- checks -------------------------------------------------------------------------------------
def test_health_and_the_openapi_document(served: Served) -> None:
    health = httpx.get(served.url + "/healthz", timeout=30).json()
    assert health["status"] == "ok" and health["backend"] == "local" and health["slots"] >= 1
    document = httpx.get(served.url + "/openapi.json", timeout=30).json()
    assert {"/v1/check", "/v1/batch", "/run_code", "/t/{token}/run_code"} <= set(document["paths"])
    assert {"CheckRequest", "BatchRequest", "RunCodeRequest", "Evidence", "ErrorBody"} <= set(
        document["components"]["schemas"]
    )


def test_the_find_duplicates_check_through_the_server(served: Served) -> None:
    good = post(served, "alice", "/v1/check", {"candidate": GOOD, "suite": "quick"})
    assert good.status_code == 200, good.text
    ev = evidence_of(good)
    assert ev.ok and ev.status is Status.PASSED and ev.suite_sha256 == load_suite(QUICK_SUITE).sha256
    wrong = post(served, "alice", "/v1/check", {"candidate": WRONG, "suite": {"name": "quick"}})
    bad = evidence_of(wrong)
    assert wrong.status_code == 200 and not bad.ok and bad.status is Status.FAILED and bad.fault is Fault.CANDIDATE
    # the caller's own evidence, and nobody else's
    with served.client(served.tokens["alice"]) as alice:
        again = alice.get(f"/v1/evidence/{ev.evidence_id}")
    assert again.status_code == 200 and evidence_of(again) == ev
    with served.client(served.tokens["bob"]) as bob:
        other = bob.get(f"/v1/evidence/{ev.evidence_id}")
    assert other.status_code == 404 and other.json()["error"] == "not_found"


def test_suites_are_listed_per_token_and_a_pinned_digest_is_held(served: Served) -> None:
    with served.client(served.tokens["bob"]) as bob:
        listed = bob.get("/v1/suites").json()
    assert [s["name"] for s in listed] == ["quick"] and listed[0]["sha256"] == load_suite(QUICK_SUITE).sha256
    pinned = {"name": "sleepy", "sha256": "0" * 64}
    refused = post(served, "alice", "/v1/check", {"candidate": sleeper(0), "suite": pinned})
    assert refused.status_code == 409 and load_suite(SLEEPY_SUITE).sha256 in refused.json()["reason"]
    right = {"name": "sleepy", "sha256": load_suite(SLEEPY_SUITE).sha256}
    assert evidence_of(post(served, "alice", "/v1/check", {"candidate": sleeper(0), "suite": right})).ok


def test_an_inline_suite_runs_for_a_token_allowed_to_send_one(served: Served) -> None:
    files = {"test_inline.py": "import solution\n\n\ndef test_one():\n    assert solution.value() == 1\n"}
    body = {"candidate": sleeper(0), "suite": {"files": files, "name": "mine"}}
    ev = evidence_of(post(served, "alice", "/v1/check", body))
    assert ev.ok and ev.suite_sha256 == tree_sha256({k: v.encode() for k, v in files.items()})
    assert ev.isolation == "fresh"  # never a reused container: its tests are the caller's code
    refused = post(served, "bob", "/v1/check", body)
    assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
    broken = post(served, "alice", "/v1/check", {"candidate": "x = 1\n", "suite": {"files": {"../x.py": "x"}}})
    assert broken.status_code == 422


# -- who may do what ----------------------------------------------------------------------------
def test_every_refusal_has_its_status(served: Served) -> None:
    body = {"candidate": sleeper(0), "suite": "sleepy"}
    with served.client() as anonymous:
        none = anonymous.post("/v1/check", json=body)
        wrong = anonymous.post("/v1/check", json=body, headers={"Authorization": f"Bearer {make_token()}"})
        basic = anonymous.post("/v1/check", json=body, headers={"Authorization": "Basic YWxpY2U6eA=="})
    for answer in (none, wrong, basic):
        assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
        assert answer.headers["www-authenticate"] == "Bearer"
    forbidden = post(served, "bob", "/v1/check", body)
    assert forbidden.status_code == 403 and "sleepy" in forbidden.json()["reason"]
    unknown = post(served, "alice", "/v1/check", {"candidate": GOOD, "suite": "nope"})
    assert unknown.status_code == 404
    with served.client(served.tokens["alice"]) as alice:
        not_json = alice.post("/v1/check", content=b"{not json", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422 and not_json.json()["error"] == "invalid"
    odd_tree = post(served, "alice", "/v1/check", {"candidate": {"/abs.py": "x = 1\n"}, "suite": "quick"})
    assert odd_tree.status_code == 422
    no_run_code = post(served, "bob", "/run_code", {"code": "print(1)", "language": "python"})
    assert no_run_code.status_code == 403


def test_a_spent_quota_is_429_with_retry_after(served: Served) -> None:
    body = {"candidate": sleeper(0), "suite": "sleepy"}
    for _ in range(2):
        assert post(served, "quota2", "/v1/check", body).status_code == 200
    spent = post(served, "quota2", "/v1/check", body)
    assert spent.status_code == 429 and spent.json()["error"] == "quota"
    assert 1 <= int(spent.headers["retry-after"]) <= 86400
    batch = post(served, "quota2", "/v1/batch", {"items": [{"id": "a", **body}]})
    assert batch.status_code == 429 and batch.json()["error"] == "quota"


def test_over_the_rate_is_429_with_retry_after(served: Served) -> None:
    body = {"candidate": sleeper(0), "suite": "sleepy"}
    assert post(served, "slow", "/v1/check", body).status_code == 200
    limited = post(served, "slow", "/v1/check", body)
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 50  # one check per 100 s


def test_over_the_concurrency_is_429(served: Served) -> None:
    body = {"candidate": sleeper(3), "suite": "sleepy"}
    first: dict[str, httpx.Response] = {}
    runner = threading.Thread(target=lambda: first.update(r=post(served, "single", "/v1/check", body)))
    runner.start()
    try:
        deadline = time.monotonic() + 120
        while metric(served, "verifier_serve_checks_in_flight") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        second = post(served, "single", "/v1/check", {"candidate": sleeper(0), "suite": "sleepy"})
    finally:
        runner.join(300)
    assert second.status_code == 429 and second.json()["error"] == "concurrency" and second.headers["retry-after"]
    assert first["r"].status_code == 200 and evidence_of(first["r"]).ok


def test_a_token_is_rotated_without_a_restart(served: Served) -> None:
    tokens = served.folder / "tokens.toml"
    old_text = tokens.read_text()
    old, new = served.tokens["carol"], make_token()
    with served.client(old) as client:
        assert client.get("/v1/suites").status_code == 200
    tokens.write_text(old_text.replace(token_hash(old), token_hash(new)))

    def answers(token: str) -> int:
        with served.client(token) as client:
            return client.get("/v1/suites").status_code

    deadline = time.monotonic() + 30
    while answers(old) != 401 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert answers(old) == 401 and answers(new) == 200
    tokens.write_text("this is [not toml")  # a broken file is not taken: the last good one stays
    time.sleep(1.0)
    assert answers(new) == 200 and answers(served.tokens["alice"]) == 200
    tokens.write_text(old_text)  # back, for the tests after this one
    while answers(old) != 200 and time.monotonic() < deadline + 30:
        time.sleep(0.1)


# -- the bounds of a request --------------------------------------------------------------------
def raw(served: Served) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    return sock


def read_all(sock: socket.socket, limit_s: float) -> bytes:
    sock.settimeout(limit_s)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def test_an_oversized_body_is_413_before_it_is_read(served: Served) -> None:
    headers = {"Authorization": f"Bearer {served.tokens['alice']}", "Content-Type": "application/json"}
    with served.client() as client:
        big = client.post("/v1/check", content=b"x" * 2_000_000, headers=headers)
    assert big.status_code == 413 and big.json()["error"] == "too_large"
    sock = raw(served)  # no Content-Length (chunked): counted as it comes
    try:
        head = f"POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.tokens['alice']}\r\n"
        sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
        chunk = b"y" * 65536
        for _ in range(20):
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        answer = read_all(sock, 30)
    except (BrokenPipeError, ConnectionResetError):
        answer = b"HTTP/1.1 413"  # closed on us mid-send: the 413 may be lost with the reset
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413")


def test_a_client_sending_a_byte_a_second_is_cut_off_holding_nothing(served: Served) -> None:
    """The body deadline is 2 s here: a client trickling its body is answered 408 and closed
    within a few seconds, and while it trickles no check is in flight (no sandbox held)."""
    body = json.dumps({"candidate": sleeper(0), "suite": "sleepy"}).encode()
    head = (
        f"POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.tokens['alice']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock = raw(served)
    started = time.monotonic()
    answer = b""
    held = []
    try:
        sock.sendall(head.encode())
        sock.setblocking(False)
        for byte in body:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError, BlockingIOError):
                break
            held.append(metric(served, "verifier_serve_checks_in_flight"))
            time.sleep(1.0)
            try:
                answer += sock.recv(65536)
            except BlockingIOError:
                continue
            if answer:
                break
        sock.setblocking(True)
        answer += read_all(sock, 10)
    finally:
        sock.close()
    elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"slow_client" in answer and elapsed < 15
    assert held and max(held) == 0


def test_slow_and_oversized_headers_are_cut_off(served: Served) -> None:
    sock = raw(served)
    started = time.monotonic()
    try:
        sock.sendall(b"POST /v1/check HTTP/1.1\r\n")
        answer = b""
        sock.setblocking(False)
        for byte in b"X-Trickle: " + b"a" * 30:
            try:
                sock.sendall(bytes([byte]))
                answer += sock.recv(65536)
            except BlockingIOError:
                time.sleep(1.0)
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if answer:
                break
        sock.setblocking(True)
        answer += read_all(sock, 10)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 15
    # Over the limit (8 KiB here) in one piece, in 4 KiB pieces, or one header value trickled in
    # 256-byte pieces (which the parser would buffer without bound): 431, counted, closed.
    before = metric(served, 'verifier_serve_refused_total{error="too_large"}')
    big_header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20_000 + b"\r\n\r\n"
    ways = ([big_header], chunks(big_header, 4096), chunks(big_header[:10_000], 256))
    for pieces in ways:
        sock = raw(served)
        try:
            for piece in pieces:
                sock.sendall(piece)
                time.sleep(0.05 if len(piece) > 256 else 0.001)
            big = read_all(sock, 30)
        except (BrokenPipeError, ConnectionResetError):
            big = b"HTTP/1.1 431 (reset before the answer was read)"
        finally:
            sock.close()
        assert big.startswith(b"HTTP/1.1 431"), big[:100]
        assert b" 200 " not in big
    assert metric(served, 'verifier_serve_refused_total{error="too_large"}') == before + len(ways)


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_headers_under_the_limit_pass_whatever_the_body_and_pipelined_requests_each_get_theirs(
    served: Served,
) -> None:
    """The header bound counts only the line and headers: a request whose headers are just under
    it and whose body (here well over it) arrives in the same write is answered, not 431; and
    three requests written at once (pipelined) get three answers, the last one's headers
    starting inside the bytes that ended the one before."""
    token = served.tokens["alice"]
    body = json.dumps({"candidate": "x = 1\n" * 2_000, "suite": "no-such-suite"}).encode()
    head = (
        f"POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    ).encode()
    pad = 8192 - len(head) - len(b"X-Pad: \r\n\r\n") - 1  # line and headers: one byte under 8 KiB
    request = head + b"X-Pad: " + b"p" * pad + b"\r\n\r\n" + body
    assert len(body) > 8192
    health = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    sock = raw(served)
    try:
        sock.sendall(request + health + health)
        sock.settimeout(30)
        answers = b""
        while answers.count(b"HTTP/1.1 ") < 3:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answers += chunk
    finally:
        sock.close()
    statuses = re.findall(rb"HTTP/1\.1 (\d{3})", answers)
    assert statuses == [b"404", b"200", b"200"], answers[:300]  # the suite is unknown: 404, read whole


# -- batches ------------------------------------------------------------------------------------
Line = dict[str, Any]


def batch_lines(served: Served, who: str, items: list[dict[str, Any]], first_only: bool = False) -> list[Line]:
    lines = []
    with served.client(served.tokens[who]) as client, client.stream("POST", "/v1/batch", json={"items": items}) as r:
        assert r.status_code == 200, r.read()
        for text in r.iter_lines():
            if text.strip():
                lines.append(json.loads(text))
                if first_only:
                    break
    return lines


def test_a_batch_streams_in_completion_order_and_a_gone_client_cancels_the_rest(served: Served) -> None:
    """Alice may run 8 at once but the pool has 2 slots: the slow item and a quick one start; the
    quick one's line comes first (the slow one sleeps 15 s: a margin against a busy machine,
    not a speed). The client then goes away: the items that had not started never run."""
    cancelled = "verifier_serve_batch_items_cancelled_total"
    cancelled_before = metric(served, cancelled)
    items = [{"id": "slow", "candidate": sleeper(15), "suite": "sleepy"}]
    items += [{"id": f"q{i}", "candidate": sleeper(0) + f"# {i}\n", "suite": "sleepy"} for i in range(12)]
    first = batch_lines(served, "alice", items, first_only=True)
    assert first[0]["id"].startswith("q") and Evidence.model_validate(first[0]["evidence"]).ok
    deadline = time.monotonic() + 60
    while metric(served, cancelled) == cancelled_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(served, cancelled) - cancelled_before >= 1
    done_then = metric(served, 'verifier_serve_checks_total{route="registered",status="passed"}')
    time.sleep(1.0)
    running = metric(served, "verifier_serve_checks_in_flight")
    assert running <= 8  # what had started when the client left finishes; nothing new starts
    assert metric(served, 'verifier_serve_checks_total{route="registered",status="passed"}') <= done_then + running


def test_a_batch_answers_every_item_with_its_id(served: Served) -> None:
    items = [
        {"id": "good", "candidate": GOOD, "suite": "quick"},
        {"id": "wrong", "candidate": WRONG, "suite": "quick"},
        {"id": "syntax", "candidate": "def value(:\n", "suite": "sleepy"},
    ]
    lines = {line["id"]: Evidence.model_validate(line["evidence"]) for line in batch_lines(served, "alice", items)}
    assert set(lines) == {"good", "wrong", "syntax"}
    assert lines["good"].ok and lines["wrong"].status is Status.FAILED and lines["syntax"].status is Status.ERROR
    duplicate = post(served, "alice", "/v1/batch", {"items": [items[0], items[0]]})
    assert duplicate.status_code == 422
    forbidden = post(served, "bob", "/v1/batch", {"items": [items[0], {**items[2], "id": "x"}]})
    assert forbidden.status_code == 403  # the whole batch, before anything runs


def test_a_humaneval_batch_gets_the_verdicts_of_bench_humaneval(served: Served, tmp_path: Path) -> None:
    """20 samples (each task's canonical solution and a seeded mutant) through /v1/batch, against
    what `verifier bench humaneval` finds for the same samples file (its library function)."""
    samples = [{"task_id": t, "completion": PROBLEMS[t].line["canonical_solution"]} for t in HUMANEVAL_TASKS]
    samples += [
        {"task_id": t, "completion": mutate(t, PROBLEMS[t].prompt, PROBLEMS[t].line["canonical_solution"])[0]}
        for t in HUMANEVAL_TASKS
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    local = he.evaluate(he.load(path), he.Options(workers=2, progress=False))
    items = [
        (str(i), PROBLEMS[s["task_id"]].source(s["completion"]), f"humaneval/{s['task_id']}")
        for i, s in enumerate(samples)
    ]
    with Client(served.url, served.tokens["alice"]) as client:
        remote = {int(line.id): line.evidence for line in client.batch(items)}
    assert sorted(remote) == list(range(len(samples)))
    assert [remote[i].status for i in range(len(samples))] == [ev.status for ev in local.evidence]
    assert [remote[i].ok for i in range(len(samples))] == [ev.ok for ev in local.evidence]
    assert sum(ev.ok for ev in local.evidence) >= len(HUMANEVAL_TASKS)  # the canonical ones pass
    assert all(remote[i].limits == local.evidence[i].limits for i in range(len(samples)))


def test_the_clients_retry_what_the_server_asks_to_be_retried(served: Served) -> None:
    """A token that may run one check at a time: while one runs, the client's second is answered
    429 (Retry-After: 1) and the client tries again after it, until it gets its evidence."""
    first: dict[str, Evidence] = {}
    with Client(served.url, served.tokens["single"], retries=60, max_wait_s=5) as client:
        runner = threading.Thread(target=lambda: first.update(ev=client.check(sleeper(3), "sleepy")))
        runner.start()
        deadline = time.monotonic() + 120
        while metric(served, "verifier_serve_checks_in_flight") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        refused_before = metric(served, 'verifier_serve_refused_total{error="concurrency"}')
        second = client.check(sleeper(0), "sleepy")
        runner.join(300)
    assert second.ok and first["ev"].ok
    assert metric(served, 'verifier_serve_refused_total{error="concurrency"}') > refused_before

    async def through_the_async_client() -> list[BatchLine]:
        async with AsyncClient(served.url, served.tokens["alice"]) as client:
            single = await client.check(sleeper(0), "sleepy")
            assert single.ok
            return [line async for line in client.batch([("a", sleeper(0), "sleepy"), ("b", "x = (", "sleepy")])]

    lines = {line.id: line.evidence for line in asyncio.run(through_the_async_client())}
    assert lines["a"].ok and lines["b"].status is Status.ERROR


def test_the_example_reward_function_scores_a_step_through_a_batch(served: Served) -> None:
    spec = importlib.util.spec_from_file_location("grpo_reward", ROOT / "examples" / "serve" / "grpo_reward.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    tasks = HUMANEVAL_TASKS[:2]
    completions: list[Any] = [PROBLEMS[t].line["canonical_solution"] for t in tasks]
    completions.append([{"role": "assistant", "content": "    return None\n"}])  # conversational, wrong
    with Client(served.url, served.tokens["alice"]) as client:
        # as TRL's GRPOTrainer calls it: prompts, completions, completion_ids, the other columns
        rewards = example.humaneval_reward(
            prompts=[PROBLEMS[t].prompt for t in [*tasks, tasks[0]]],
            completions=completions,
            completion_ids=[[1, 2]] * 3,
            task_id=[*tasks, tasks[0]],
            trainer_state=None,
            log_extra=lambda *a: None,
            log_metric=lambda *a: None,
            client=client,
        )
    assert rewards == [1.0, 1.0, 0.0]


# -- SandboxFusion's /run_code ------------------------------------------------------------------
def verl_reads(answer: dict[str, Any], expected: str) -> object:
    """What verl's reward code makes of an answer (verl/utils/reward_score/sandbox_fusion/utils.py,
    restated): True / False for a right / wrong stdout, -1 a sandbox error, -2 a runtime error,
    -3 a timeout, -4 a compile error."""
    status, compiled, run = answer.get("status"), answer.get("compile_result"), answer.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        if compiled and (
            compiled.get("status") in ("Error", "TimeLimitExceeded")
            or (compiled.get("status") == "Finished" and compiled.get("return_code") != 0)
        ):
            return -4
        if run and run.get("status") == "TimeLimitExceeded":
            return -3
        if run and (run.get("status") == "Error" or run.get("return_code") != 0):
            return -2
        return -1
    if status == "Success" and run and run.get("status") == "Finished":
        return str(run.get("stdout") or "").rstrip("\n") == expected.rstrip("\n")
    return -1


def run_code(served: Served, body: dict[str, Any], *, header: bool = False) -> httpx.Response:
    """A /run_code request as verl sends it (no header: the token in the URL), and as verl does,
    sent again after a 504 (the host was too busy to judge it: a spinning program on a starved
    machine), at most SETTLE_ATTEMPTS times in all, as the suite's other checks are."""
    token = served.tokens["alice"]
    payload = {"compile_timeout": 10, "run_timeout": 5, "memory_limit_MB": 128, "files": {}, "fetch_files": [], **body}
    for _ in range(SETTLE_ATTEMPTS):
        if header:
            answer = post(served, "alice", "/run_code", payload)
        else:
            with httpx.Client(base_url=served.url, timeout=300) as client:
                answer = client.post(f"/t/{token}/run_code", json=payload)
        if answer.status_code != 504:
            break
    return answer


def test_run_code_answers_what_verl_reads(served: Served) -> None:
    double = "import sys\nn = int(input())\nprint(n * 2)\nprint('debug', file=sys.stderr)\n"
    ok = run_code(served, {"code": double, "stdin": "21\n", "language": "python"})
    assert ok.status_code == 200, ok.text
    answer = ok.json()
    assert answer["status"] == "Success" and answer["run_result"]["status"] == "Finished"
    assert answer["run_result"]["stdout"] == "42\n" and answer["run_result"]["stderr"] == "debug\n"
    assert answer["run_result"]["return_code"] == 0 and answer["run_result"]["execution_time"] >= 0
    assert verl_reads(answer, "42") is True and verl_reads(answer, "43") is False
    crash = run_code(served, {"code": "import sys\nprint('part')\nsys.exit(3)\n", "language": "python"}, header=True)
    assert crash.json()["run_result"]["return_code"] == 3 and verl_reads(crash.json(), "part") == -2
    loop = run_code(served, {"code": "while True:\n    pass\n", "language": "python", "run_timeout": 1})
    assert loop.json()["run_result"]["status"] == "TimeLimitExceeded" and verl_reads(loop.json(), "") == -3
    syntax = run_code(served, {"code": "print(1\n", "language": "python"})  # as SandboxFusion: run, exit 1
    assert syntax.json()["run_result"]["return_code"] == 1 and verl_reads(syntax.json(), "1") == -2
    evidence_id = answer["evidence_id"]
    with served.client(served.tokens["alice"]) as alice:
        assert evidence_of(alice.get(f"/v1/evidence/{evidence_id}")).cases[0].stdout_untrusted == "42\n"


def test_run_code_refuses_what_it_does_not_support(served: Served) -> None:
    for body in (
        {"code": "<?php echo 1;", "language": "php"},  # SandboxFusion runs it; this server does not
        {"code": "print(1)", "language": "python", "files": {"/etc/passwd": "eA=="}},
        {"code": "print(1)", "language": "python", "fetch_files": ["/etc/passwd"]},
        {"code": "print(1)", "language": "python", "fetch_files": ["../x"]},
        {"code": "print(1)", "language": "python", "memory_limit_MB": 100_000},
    ):
        refused = run_code(served, body)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid", body
    with httpx.Client(base_url=served.url, timeout=60) as client:
        stranger = client.post(f"/t/{make_token()}/run_code", json={"code": "print(1)", "language": "python"})
    assert stranger.status_code == 401


# -- last: what the logs hold -------------------------------------------------------------------
def test_no_token_reaches_the_logs_and_the_metrics_count(served: Served) -> None:
    """Self-contained: it makes the requests it counts (it must not lean on which tests ran
    before it on this server)."""
    refused = 'verifier_serve_refused_total{error="unauthorized"}'
    passed = 'verifier_serve_checks_total{route="programs",status="passed"}'
    refused_before, passed_before = metric(served, refused), metric(served, passed)
    with httpx.Client(base_url=served.url, timeout=60) as client:
        for _ in range(3):
            stranger = client.post(f"/t/{make_token()}/run_code", json={"code": "print(1)", "language": "python"})
            assert stranger.status_code == 401
    answer = run_code(served, {"code": "print(42)", "language": "python"})
    assert answer.json()["status"] == "Success"
    assert metric(served, refused) == refused_before + 3
    assert metric(served, passed) == passed_before + 1
    log = served.log
    assert "/t/<token>/run_code" in log
    for token in served.tokens.values():
        assert token not in log
