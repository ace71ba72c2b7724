"""The doors of `verifier serve` (issue 32, section 3), attacked through a real server process on
127.0.0.1 with small deadlines (1 s), by raw sockets that play the hostile clients:

- a connection in any phase (an answered request whose body was not read, a body trickled after
  its answer, a chunk extension that never ends, an upgrade, a client that takes none of its
  answer) is let go by the server within a bound, seen from the outside: the server process no
  longer holds the socket (`/proc/PID/fd` and `/proc/net/tcp`), whatever the socket says;
- one address without a token cannot make the server full: a tenant's `/healthz` and check are
  served while it tries (the attacker speaks from 127.0.0.2, the tenant from 127.0.0.1);
- no token reaches the log or the metrics whatever the path's form, and no path writes a line;
- a `/run_code` evidence kept for GET /v1/evidence holds a program's large output cut, with the
  SHA-256 of the whole, and many of them do not grow the server by what they printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import QUICK_SUITE, SETTLE_ATTEMPTS
from tests.serve.server import Served, make_token, start

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("serve-doors")]

#: How long the server may take to let a connection go (its deadlines are 1 s): a bound for a
#: machine busy with other tests, not a speed.
RELEASE_S = 30.0
MAX_CONNECTIONS = 16


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-doors")
    tokens: dict[str, tuple[str, dict[str, Any]]] = {
        "tenant": (
            make_token(),
            {"suites": ["quick"], "run_code": True, "concurrency": 4, "rate_per_s": 1000.0, "burst": 1000},
        ),
    }
    # Only keys today's main knows, so that the same server runs against the code before the fix.
    config = f"""
policy = "reuse"
[pool]
size = 1
[http]
header_timeout_s = 1
body_timeout_s = 1
keep_alive_s = 1
max_body_bytes = 100000
max_connections = {MAX_CONNECTIONS}
[run_code]
max_memory_mb = 256
[suites]
quick = "{QUICK_SUITE}"
"""
    slots = folder / "slots"
    server = start(folder, config, tokens, env={"VERIFIER_SLOTS_DIR": str(slots), "VERIFIER_MAX_SANDBOXES": "2"})
    try:
        yield server
    finally:
        server.stop()


# -- what the server process holds, seen from outside -----------------------------------------
def server_peers(pid: int) -> set[tuple[str, int]]:
    """The remote ends of every TCP socket the process holds open (not its listening one)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    peers = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        if inode in inodes and state != "0A":  # 0A: LISTEN
            ip_hex, port_hex = remote.split(":")
            peers.add((socket.inet_ntoa(struct.pack("<I", int(ip_hex, 16))), int(port_hex, 16)))
    return peers


def held(served: Served, sock: socket.socket) -> bool:
    return sock.getsockname()[:2] in server_peers(served.proc.pid)


def released_within(served: Served, sock: socket.socket, limit_s: float, keep_sending: bytes = b"") -> float | None:
    """Seconds until the server let `sock` go (None: it still held it after `limit_s`), while
    the client sends `keep_sending` (one piece every 0.2 s) as long as it can."""
    started = time.monotonic()
    sock.setblocking(False)
    sending = bool(keep_sending)
    while time.monotonic() - started < limit_s:
        if not held(served, sock):
            return time.monotonic() - started
        if sending:
            try:
                sock.send(keep_sending)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                sending = False
        time.sleep(0.2)
    return None


def connect(served: Served, source: str = "127.0.0.1", rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(("127.0.0.1", served.port))
    return sock


def answer_head(sock: socket.socket) -> bytes:
    """The first answer's status line and headers (what arrives within 30 s)."""
    data = b""
    sock.settimeout(30)
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


# -- every phase has a deadline ---------------------------------------------------------------
def head(method: str, path: str, *headers: str) -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: x\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode()


#: name -> (what the client sends first, the status it is answered, what it then sends again
#: and again). Each is answered before its body is read, then sends one more byte at a time.
HELD: dict[str, tuple[bytes, bytes, bytes]] = {
    "a 401 before the body, then the body trickled": (
        head("POST", "/v1/check", "Content-Type: application/json", "Content-Length: 90000") + b"{",
        b"401",
        b"x",
    ),
    "a token in the URL that is not known, then the body trickled": (
        head("POST", f"/t/{make_token()}/run_code", "Content-Length: 90000") + b"{",
        b"401",
        b" ",
    ),
    "a GET with a chunked body, then many small chunks": (
        head("GET", "/healthz", "Transfer-Encoding: chunked") + b"1\r\na\r\n",
        b"200",
        b"1\r\na\r\n",
    ),
    "a GET with a chunked body whose chunk extension never ends": (
        head("GET", "/healthz", "Transfer-Encoding: chunked") + b"5;ext=",
        b"200",
        b"e",
    ),
    "Expect: 100-continue answered 401, the client waiting for its 100": (
        head("POST", "/v1/check", "Content-Length: 90000", "Expect: 100-continue"),
        b"401",
        b"",
    ),
    "a 401 with a body of Content-Length 10**18": (
        head("POST", "/v1/check", f"Content-Length: {10**18}") + b"{",
        b"401",
        b"y" * 512,
    ),
}


@pytest.mark.parametrize("name", list(HELD))
def test_an_answered_connection_is_let_go_at_its_deadline(served: Served, name: str) -> None:
    first, status, again = HELD[name]
    sock = connect(served)
    try:
        sock.sendall(first)
        answered = answer_head(sock)
        assert answered.startswith(b"HTTP/1.1 " + status), answered[:200]
        took = released_within(served, sock, RELEASE_S, keep_sending=again)
    finally:
        sock.close()
    assert took is not None, f"{name}: the server still held the connection {RELEASE_S:g} s after its answer"


def test_an_upgrade_is_answered_as_a_plain_request_and_let_go(served: Served) -> None:
    """WebSocket (or h2c) upgrade: never taken; the answer is a plain one and the connection is
    not kept open by anything the client sends after it."""
    sock = connect(served)
    try:
        sock.sendall(
            head(
                "GET",
                "/healthz",
                "Connection: Upgrade",
                "Upgrade: websocket",
                "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            )
        )
        answered = answer_head(sock)
        assert not answered.startswith(b"HTTP/1.1 101"), answered[:200]
        took = released_within(served, sock, RELEASE_S, keep_sending=b"\x81")
    finally:
        sock.close()
    assert took is not None


def test_a_client_that_takes_none_of_its_answers_is_let_go(served: Served) -> None:
    """A tenant pipelines four /run_code requests whose answers are 1.4 MB each, with a tiny
    receive window, and never reads a byte: the answers fill the server's buffers, the second
    one waits for room that never comes; the server cuts the client off."""
    payload = json.dumps({"code": loud(99), "language": "python", "run_timeout": 20, "memory_limit_MB": 128})
    request = (
        head(
            "POST",
            f"/t/{served.tokens['tenant']}/run_code",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
        )
        + payload.encode()
    )
    sock = connect(served, rcvbuf=4096)
    try:
        sock.sendall(request * 4)
        deadline = time.monotonic() + 300
        while held(served, sock) and time.monotonic() < deadline:  # the first program runs, its answer is written
            if rss_bytes(served.proc.pid) and sock_has_data(sock):
                break
            time.sleep(0.2)
        took = released_within(served, sock, RELEASE_S + 300)
    finally:
        sock.close()
    assert took is not None, "answers never read: the server still holds the connection"


def sock_has_data(sock: socket.socket) -> bool:
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def test_a_flood_of_pipelined_requests_is_not_queued_without_bound(served: Served) -> None:
    """Two thousand requests in one write: the server does not queue them all (each is a request
    object waiting behind the first); it answers a few and closes the connection."""
    sock = connect(served)
    answers = b""
    try:
        sock.sendall(head("GET", "/healthz") * 2000)
        sock.settimeout(30)
        while True:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            answers += chunk
    finally:
        sock.close()
    assert answers.count(b"HTTP/1.1 ") < 100, f"{answers.count(b'HTTP/1.1 ')} pipelined requests were answered"


# -- one address without a token --------------------------------------------------------------
def test_one_address_without_a_token_cannot_fill_the_server(served: Served) -> None:
    """From 127.0.0.2, as many connections as the server takes, each answered 401 before its body
    and then trickling it (so that no idle timer fires): the tenant, from 127.0.0.1, is served
    meanwhile (not 503), and each attacking connection is let go."""
    attackers: list[socket.socket] = []
    stop = threading.Event()

    def trickle() -> None:
        while not stop.is_set():
            for sock in list(attackers):
                try:
                    sock.send(b"x")
                except OSError:
                    pass
            time.sleep(0.2)

    request = head("POST", "/v1/check", "Content-Length: 90000") + b"{"
    trickler = threading.Thread(target=trickle, daemon=True)
    try:
        for _ in range(MAX_CONNECTIONS + 2):
            try:
                sock = connect(served, source="127.0.0.2")
                sock.sendall(request)
            except OSError:
                continue
            sock.setblocking(False)
            attackers.append(sock)
        trickler.start()
        time.sleep(0.5)
        health = httpx.get(served.url + "/healthz", timeout=30)
        headers = {"Authorization": f"Bearer {served.tokens['tenant']}"}
        suites = httpx.get(served.url + "/v1/suites", headers=headers, timeout=30)
        holding = sum(1 for sock in attackers if held(served, sock))
    finally:
        stop.set()
        if trickler.is_alive():
            trickler.join(10)
        for sock in attackers:
            sock.close()
    assert health.status_code == 200, (health.status_code, health.text[:200])
    assert suites.status_code == 200 and [s["name"] for s in suites.json()] == ["quick"]
    assert holding < MAX_CONNECTIONS - 1, f"one address without a token held {holding} connections"


# -- the log and the metrics ------------------------------------------------------------------
def test_no_token_reaches_the_log_whatever_the_paths_form(served: Served) -> None:
    token = served.tokens["tenant"]
    paths = [
        f"//t/{token}/run_code",
        f"/./t/{token}/run_code",
        f"/t/./{token}/run_code",
        f"/t/{token}/./run_code",
        f"/x/../t/{token}/run_code",
        f"/t/{token};v=1/run_code",
        f"/t/{token}%2Frun_code",
        f"/%74/{token}/run_code",
        f"/t/%74{token[1:]}/run_code",
        "/t/" + "".join(f"%{b:02x}" for b in token.encode()) + "/run_code",
        f"/v1/evidence/{token}",
        f"/T/{token}/RUN_CODE",
        f"/t/{token}/run_code%0a127.0.0.1%20FORGED%20GET%20/admin%20200",
        "/healthz%0d%0aFORGED-2%20%1b[31m",
    ]
    for path in paths:
        sock = connect(served)
        try:
            sock.sendall(head("POST", path, "Content-Length: 2") + b"{}")
            answer_head(sock)
        finally:
            sock.close()
    time.sleep(0.5)  # the access log line is written as the answer ends
    log = served.log
    metrics = httpx.get(served.url + "/metrics", timeout=30).text
    assert token not in log and token not in metrics
    assert token[:16] not in log, "a part of the token reached the log"
    forged = [line for line in log.splitlines() if "FORGED" in line and "verifier.serve.access: " not in line]
    assert forged == [], f"a path wrote a line of its own: {forged}"
    assert "\x1b" not in log


# -- what is kept -----------------------------------------------------------------------------
def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def run_code(served: Served, code: str) -> httpx.Response:
    payload = {"code": code, "language": "python", "run_timeout": 20, "memory_limit_MB": 128}
    with httpx.Client(base_url=served.url, timeout=300) as client:
        for _ in range(SETTLE_ATTEMPTS):
            answer = client.post(f"/t/{served.tokens['tenant']}/run_code", json=payload)
            if answer.status_code != 504:
                break
    return answer


def loud(n: int) -> str:
    """A program writing 700,000 characters to stdout and as many to stderr (under the output
    limit of /run_code), different for each `n`."""
    return (
        f"import sys\nsys.stdout.write(({n} % 10 and 'a' or 'b') * 700_000)\nsys.stderr.write('e' * 700_000)\n# {n}\n"
    )


def test_kept_evidence_is_cut_with_its_hash_and_bounded_in_bytes(served: Served) -> None:
    first = run_code(served, loud(0))
    assert first.status_code == 200 and first.json()["status"] == "Success", first.text[:300]
    assert len(first.json()["run_result"]["stdout"]) == 700_000  # the answer itself is whole
    headers = {"Authorization": f"Bearer {served.tokens['tenant']}"}
    kept = httpx.get(served.url + f"/v1/evidence/{first.json()['evidence_id']}", headers=headers, timeout=60)
    assert kept.status_code == 200
    stdout = kept.json()["cases"][0]["stdout_untrusted"]
    whole = hashlib.sha256(("b" * 700_000).encode()).hexdigest()
    assert len(stdout) < 200_000 and whole in stdout, stdout[-300:]
    for n in range(1, 6):  # the server's first-time costs (imports, the allocator's arenas) come first
        assert run_code(served, loud(n)).status_code == 200
    # Then 80 programs: kept whole, their output would grow the server by 112 MB; kept cut, by
    # about 140 KB each (the cut texts and their hashes), plus the allocator's own steps (2-6 MB
    # seen on a quiet machine, up to about 10 MB on a loaded one, where more threads' arenas come
    # into use: 40 programs grew it by 20.8 MB beside a test run). Counted over 80, the steps
    # stay noise.
    before = rss_bytes(served.proc.pid)
    for n in range(6, 86):
        answer = run_code(served, loud(n))
        assert answer.status_code == 200, answer.text[:300]
    grown = rss_bytes(served.proc.pid) - before
    printed = 80 * 2 * 700_000
    assert grown < printed / 3, f"80 programs printed {printed} bytes and the server grew by {grown}"
