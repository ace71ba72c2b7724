"""`/run_code` as verl calls it, through a real server on 127.0.0.1 on the real engine: many
programs at once by default, SandboxFusion's answers for a syntax error, a time limit and the wall
time, verl's exact requests replayed (its payload bytes and headers, `requests` as its client,
its reading of the answer), and `AsyncClient.run_code`."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests

from tests.conftest import SETTLE_ATTEMPTS
from tests.serve.server import SLEEPY_SUITE, Served, make_token, start
from verifier.client import AsyncClient, Client, ServeError

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("serve-run-code")]

SLOTS = 4


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-run-code")
    everything = {"run_code": True, "suites": ["*"], "concurrency": 64, "rate_per_s": 1000.0, "burst": 1000}
    tokens = {"verl": (make_token(), everything)}
    # No pool sizes: the defaults are what is tested.
    config = f'[run_code]\nmax_memory_mb = 256\nmax_run_timeout_s = 5\n[suites]\nsleepy = "{SLEEPY_SUITE}"\n'
    env = {"VERIFIER_SLOTS_DIR": str(folder / "slots"), "VERIFIER_MAX_SANDBOXES": str(SLOTS)}
    server = start(folder, config, tokens, env=env)
    try:
        yield server
    finally:
        server.stop()


def verl_call(served: Served, code: str, stdin: str | None, timeout: int = 2, memory_mb: int = 256) -> dict[str, Any]:
    """verl's `call_sandbox_api`, restated: the same payload (keys in its order, `json.dumps`),
    the same headers, `requests.post(url, headers=..., data=...)`, a 504 tried again (three tries
    in all, 1 s then 2 s apart; here as many as the suite's other checks settle)."""
    payload = json.dumps(
        {
            "compile_timeout": timeout,
            "run_timeout": timeout,
            "code": code,
            "stdin": stdin,
            "memory_limit_MB": memory_mb,
            "language": "python",
            "files": {},
            "fetch_files": [],
        }
    )
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    url = f"{served.url}/t/{served.tokens['verl']}/run_code"
    for attempt in range(max(3, SETTLE_ATTEMPTS)):
        response = requests.post(url, headers=headers, data=payload, timeout=timeout + timeout + 300)
        if response.status_code != 504:
            response.raise_for_status()
            answer: dict[str, Any] = response.json()
            return answer
        threading.Event().wait(min(attempt + 1, 2))
    raise AssertionError("504 on every try")


def verl_reads(answer: dict[str, Any], expected: str | None) -> object:
    """verl's `_process_single_case` reading of an answer, restated: True / False (right / wrong
    stdout), -1 sandbox error, -2 runtime error, -3 timeout, -4 compile error."""
    status, compiled, run = answer.get("status"), answer.get("compile_result"), answer.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        if compiled and (
            compiled.get("status") in ("Error", "TimeLimitExceeded")
            or (compiled.get("status") == "Finished" and compiled.get("return_code") != 0)
        ):
            return -4
        if run:
            if run.get("status") == "TimeLimitExceeded":
                return -3
            if run.get("status") == "Error" or (run.get("status") == "Finished" and run.get("return_code") != 0):
                return -2
        return -1
    if status == "Success" and run and run.get("status") == "Finished":
        stdout = run.get("stdout") if run.get("stdout") is not None else ""
        return expected is None or str(stdout).rstrip("\n") == str(expected).rstrip("\n")
    return -1


def test_programs_run_at_once_by_default(served: Served) -> None:
    """Four programs that each sleep 3 s, sent together: their runs overlap (with the old
    `pool_size = 1` they ran one after another, never overlapping)."""
    code = "import time\nstart = time.time()\ntime.sleep(3)\nprint(start, time.time())\n"
    answers: list[dict[str, Any]] = []

    def one() -> None:
        answers.append(verl_call(served, code, None, timeout=5))

    threads = [threading.Thread(target=one) for _ in range(SLOTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    spans = sorted(tuple(map(float, a["run_result"]["stdout"].split())) for a in answers)
    assert len(spans) == SLOTS and all(a["status"] == "Success" for a in answers)
    overlapping = sum(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert overlapping >= 1, spans


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most of the (start, end) spans that share a moment."""
    return max(sum(start <= moment < end for start, end in spans) for moment, _ in spans)


def test_registered_checks_run_at_once_by_default(served: Served) -> None:
    """Four checks of a registered suite, each sleeping 5 s, sent together: more than two run at
    once (the registered pool's size, also how many run at once, was 2 by default)."""
    candidate = (
        "import time\n\n\ndef value():\n    start = time.time()\n    time.sleep(5)\n"
        "    raise AssertionError(f'span {start} {time.time()} end')\n"
    )
    spans: list[tuple[float, float]] = []

    def one() -> None:
        with Client(served.url, served.tokens["verl"]) as client:
            ev = client.check(candidate, "sleepy")
        found = re.search(r"span ([0-9.]+) ([0-9.]+) end", " ".join(str(f.detail_untrusted) for f in ev.failures))
        assert found is not None, ev.reason
        spans.append((float(found.group(1)), float(found.group(2))))

    threads = [threading.Thread(target=one) for _ in range(SLOTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert len(spans) == SLOTS
    assert most_at_once(spans) > 2, spans


def test_sandboxfusion_answers_a_syntax_error_a_time_limit_and_the_wall_time(served: Served) -> None:
    syntax = verl_call(served, "print(1\n", None)
    assert syntax["status"] == "Failed" and syntax["compile_result"] is None
    run = syntax["run_result"]
    assert run["status"] == "Finished" and run["return_code"] == 1 and run["stdout"] == ""
    assert run["stderr"].endswith("SyntaxError: '(' was never closed\n") and "line 1\n    print(1\n" in run["stderr"]
    assert verl_reads(syntax, "1") == -2  # SandboxFusion's Python: a runtime error, not a compile error
    nul = verl_call(served, "x = 1\0\n", None)
    assert nul["run_result"]["return_code"] == 1 and "null bytes" in nul["run_result"]["stderr"]
    # run_timeout past the server's limit (5 s): the limit, and SandboxFusion's words past it
    # (a program that sleeps: a spinning one on a starved machine may be answered 504, too busy to judge)
    loop = verl_call(served, "import time\nprint('started', flush=True)\ntime.sleep(100)\n", None, timeout=100)
    assert loop["status"] == "Failed" and loop["run_result"]["status"] == "TimeLimitExceeded"
    assert loop["run_result"]["return_code"] is None and loop["run_result"]["stdout"] == "started\n"
    assert verl_reads(loop, "") == -3
    # execution_time: wall time, a program's own sleep included (charged time is the evidence's)
    sleeper = verl_call(served, "import time\ntime.sleep(1.2)\nprint('ok')\n", None, timeout=5)
    assert sleeper["status"] == "Success" and sleeper["run_result"]["execution_time"] >= 1.2
    with Client(served.url, served.tokens["verl"]) as client:
        case = client.evidence(sleeper["evidence_id"]).cases[0]
    assert case.wall_s == sleeper["run_result"]["execution_time"] and case.wall_s >= case.time_s


def test_verls_reading_of_every_outcome(served: Served) -> None:
    double = "n = int(input())\nprint(n * 2)\n"
    assert verl_reads(verl_call(served, double, "21"), "42") is True
    assert verl_reads(verl_call(served, double, "21"), "43") is False
    assert verl_reads(verl_call(served, "raise SystemExit(3)\n", None), None) == -2
    assert verl_reads(verl_call(served, "1 / 0\n", None), None) == -2
    crash = verl_call(served, "1 / 0\n", None)
    assert "ZeroDivisionError" in crash["run_result"]["stderr"] and crash["run_result"]["return_code"] == 1


def test_the_async_client_runs_code_as_the_sync_one(served: Served) -> None:
    request = {"code": "print(input()[::-1])", "stdin": "abc", "language": "python", "run_timeout": 2}

    async def both() -> list[Any]:
        async with AsyncClient(served.url, served.tokens["verl"]) as client:
            return list(await asyncio.gather(client.run_code(request), client.run_code({**request, "stdin": "xy"})))

    first, second = asyncio.run(both())
    with Client(served.url, served.tokens["verl"]) as client:
        sync = client.run_code(request)
    assert first.run_result is not None and first.run_result.stdout == "cba\n"
    assert second.run_result is not None and second.run_result.stdout == "yx\n"
    assert sync.status == first.status == "Success"
    assert sync.run_result is not None and sync.run_result.stdout == first.run_result.stdout


def test_files_are_written_beside_the_program(served: Served) -> None:
    """SandboxFusion's `files`: path -> base64, written beside the program before it runs."""
    code = (
        "import pathlib\nprint(open('data.txt').read().strip())\n"
        "print(pathlib.Path('sub/blob.bin').read_bytes().hex())\n"
        "print(sorted(p.name for p in pathlib.Path('.').iterdir()))\n"
    )
    files = {
        "data.txt": base64.b64encode(b"hello\n").decode(),
        "sub/blob.bin": base64.b64encode(bytes([0, 255, 10])).decode(),
        "skipped.txt": None,  # None is skipped, as SandboxFusion's restore_files does
    }
    with Client(served.url, served.tokens["verl"]) as client:
        answer = client.run_code({"code": code, "language": "python", "files": files})
        assert answer.status == "Success", answer
        assert answer.run_result is not None
        assert answer.run_result.stdout == "hello\n00ff0a\n['data.txt', 'solution.py', 'sub']\n"
        for bad, words in (
            ({"../up.txt": "eA=="}, "files: "),
            ({"a.txt": "%%%"}, "not base64"),
            ({"solution.py": "eA=="}, "the program's own file"),
        ):
            try:
                client.run_code({"code": "print(1)", "language": "python", "files": bad})
            except ServeError as exc:
                assert exc.status == 400 and words in exc.reason, exc
            else:
                raise AssertionError(f"{bad} was taken")


def run_code_raw(served: Served, body: dict[str, Any]) -> httpx.Response:
    """One /run_code request as JSON, tried again after a 504 (as verl does)."""
    with served.client(served.tokens["verl"], timeout=300) as client:
        for _ in range(SETTLE_ATTEMPTS):
            answer = client.post("/run_code", json={"language": "python", "run_timeout": 5, **body})
            if answer.status_code != 504:
                break
    return answer


def test_fetch_files_come_back_as_sandboxfusion_gives_them(served: Served) -> None:
    """SandboxFusion's `fetch_files`: the files the program wrote in its folder come back base64
    under the names asked for; a missing one is left out (SandboxFusion's `os.path.isfile` test),
    with no message; the evidence holds each one's SHA-256 and size, bound to what came back."""
    blob = bytes(range(256)) * 3
    code = (
        "import os\nopen('a.txt', 'w').write('secret')\nos.makedirs('sub/deeper')\n"
        "open('sub/deeper/b.bin', 'wb').write(bytes(range(256)) * 3)\nos.link('a.txt', 'twin.txt')\nprint('done')\n"
    )
    asked = ["a.txt", "sub/deeper/b.bin", "missing.txt", "twin.txt"]
    answer = run_code_raw(served, {"code": code, "fetch_files": asked})
    assert answer.status_code == 200, answer.text
    reply = answer.json()
    assert reply["status"] == "Success" and reply["message"] == "", reply
    assert reply["run_result"]["stdout"] == "done\n"
    assert sorted(reply["files"]) == ["a.txt", "sub/deeper/b.bin", "twin.txt"]
    assert base64.b64decode(reply["files"]["a.txt"]) == b"secret"
    assert base64.b64decode(reply["files"]["twin.txt"]) == b"secret"  # the program's own hard link
    assert base64.b64decode(reply["files"]["sub/deeper/b.bin"]) == blob
    with served.client(served.tokens["verl"]) as client:
        evidence = client.get(f"/v1/evidence/{reply['evidence_id']}").json()
    files = {f["path"]: f for f in evidence["cases"][-1]["files"]}
    assert list(files) == asked
    assert files["sub/deeper/b.bin"]["sha256"] == hashlib.sha256(blob).hexdigest()
    assert files["sub/deeper/b.bin"]["size"] == len(blob)
    assert files["missing.txt"]["error"] == "no such file" and files["missing.txt"]["sha256"] is None
    # A program that fails still has its files read (SandboxFusion reads them whatever the run did).
    failing = run_code_raw(
        served, {"code": "open('out.txt', 'w').write('x')\nraise SystemExit(3)", "fetch_files": ["out.txt"]}
    )
    assert failing.json()["status"] == "Failed" and failing.json()["files"] == {"out.txt": "eA=="}, failing.text
    # Nothing is fetched unless asked for, and the next program sees none of the last one's files.
    after = run_code_raw(served, {"code": "import os\nprint(sorted(os.listdir('.')))", "fetch_files": ["a.txt"]})
    assert after.json()["files"] == {} and after.json()["run_result"]["stdout"] == "['solution.py']\n", after.text
