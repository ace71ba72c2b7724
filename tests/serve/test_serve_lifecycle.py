"""`verifier serve` under load and at its end, through a real server process: it queues for the
machine-wide slots that `verifier check` takes too (a folder of slots of this module's own, so
that the test decides who holds them), answers `overloaded` (503, Retry-After, never a timeout)
when it cannot start a check in time, and on SIGTERM stops accepting, lets the checks in flight
finish within its deadline, cancels the rest and removes every container."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.server import SLEEPY_SUITE, Served, make_token, start
from verifier.evidence import Evidence, Fault, Status
from verifier.sandbox.admission import Admission

pytestmark = pytest.mark.docker

SLOTS = 2


def sleeper(seconds: float) -> str:
    return f"import time\n\n\ndef value():\n    time.sleep({seconds})\n    return 1\n"


@pytest.fixture(scope="module")
def slots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("slots")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, slots: Path, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-life")
    tokens: dict[str, tuple[str, dict[str, Any]]] = {
        "one": (make_token(), {"suites": ["sleepy"], "daily_quota": 1}),
        "many": (make_token(), {"suites": ["sleepy"], "concurrency": 4}),
    }
    config = f"""
policy = "reuse"
queue_wait_s = 3
shutdown_s = 20
retry_after_s = 7
[pool]
size = 2
[run_code]
enabled = false
[suites]
sleepy = "{SLEEPY_SUITE}"
"""
    server = start(folder, config, tokens, env=slot_env(slots))
    yield server
    if server.proc.poll() is None:  # a failed test left it running
        server.stop()


def slot_env(slots: Path) -> dict[str, str]:
    return {"VERIFIER_SLOTS_DIR": str(slots), "VERIFIER_MAX_SANDBOXES": str(SLOTS)}


def metric(served: Served, name: str) -> float:
    for line in httpx.get(served.url + "/metrics", timeout=30).text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def check(served: Served, who: str, seconds: float) -> httpx.Response:
    with served.client(served.tokens[who]) as client:
        return client.post("/v1/check", json={"candidate": sleeper(seconds), "suite": "sleepy"})


def held(slots: Path) -> int:
    """How many of the slots some process holds now (a lock we cannot take)."""
    import fcntl

    count = 0
    for index in range(SLOTS):
        path = slots / f"slot-{index}"
        if not path.exists():
            continue
        with open(path, "rb") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                count += 1
    return count


def test_a_check_that_cannot_start_in_time_is_overloaded_and_not_charged(
    served: Served, slots: Path, tmp_path: Path
) -> None:
    """`verifier check` holds one slot (a candidate that sleeps), this test process the other: the
    server's check waits its queue_wait_s (3 s), then is answered overloaded, 503 with Retry-After,
    the host's fault, never a timeout; the token's daily quota of one check is not spent by it."""
    candidate = tmp_path / "solution.py"
    candidate.write_text(sleeper(30))
    cli = subprocess.Popen(
        [sys.executable, "-m", "verifier", "check", str(candidate), "--suite", str(SLEEPY_SUITE), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **slot_env(slots)},
    )
    try:
        with Admission(SLOTS, folder=slots).slot():
            deadline = time.monotonic() + 240
            while held(slots) < SLOTS and time.monotonic() < deadline and cli.poll() is None:
                time.sleep(0.1)
            assert held(slots) == SLOTS, "the CLI's check never took its slot"
            started = time.monotonic()
            busy = check(served, "one", 0)
            waited = time.monotonic() - started
    finally:
        out, err = cli.communicate(timeout=300)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "7"
    ev = Evidence.model_validate_json(busy.content)
    assert ev.status is Status.OVERLOADED and ev.fault is Fault.HOST and not ev.image_id
    assert "no sandbox slot came free within 3 s" in ev.reason and 3 <= waited < 120
    assert metric(served, 'verifier_serve_overloaded_total{reason="no_slot"}') == 1
    assert json.loads(out)["ok"] is True, err[-2000:]  # the CLI's own check was not disturbed
    later = check(served, "one", 0)  # the overloaded one did not spend the quota of one
    assert later.status_code == 200 and Evidence.model_validate_json(later.content).ok


def test_sigterm_finishes_what_it_can_within_its_deadline_and_removes_every_container(served: Served) -> None:
    """Last (it ends the server). A 3 s check and a 100 s one run; on SIGTERM the server stops
    accepting, the short one is answered, the long one is cut at the 20 s deadline, and no
    container of the server is left (Served.stop checks)."""
    answers: dict[str, Any] = {}

    def ask(name: str, seconds: float) -> None:
        try:
            answers[name] = check(served, "many", seconds)
        except httpx.HTTPError as exc:
            answers[name] = exc

    threads = [threading.Thread(target=ask, args=(n, s)) for n, s in (("short", 3), ("long", 100))]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 240
    while metric(served, "verifier_serve_running_sandboxes") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(served, "verifier_serve_running_sandboxes") == 2
    stopped = time.monotonic()
    served.proc.terminate()
    refused = False
    while not refused and time.monotonic() - stopped < 10:
        try:
            socket.create_connection(("127.0.0.1", served.port), timeout=2).close()
            time.sleep(0.1)
        except OSError:
            refused = True
    assert refused, "the server still accepted connections after SIGTERM"
    served.stop(timeout=180)
    took = time.monotonic() - stopped
    for thread in threads:
        thread.join(60)
    short = answers["short"]
    assert isinstance(short, httpx.Response) and short.status_code == 200
    assert Evidence.model_validate_json(short.content).ok
    long = answers["long"]
    assert not (isinstance(long, httpx.Response) and long.status_code == 200)  # cut, never a verdict
    assert took < 150  # the deadline (20 s) and the removal of the containers, not the 100 s
