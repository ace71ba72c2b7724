"""`/run_code` requests for the same program that wait at once share one sandbox job
(`verifier.serve.coalesce`), through a real server on 127.0.0.1 on the real engine: each answer
is the one the request gets alone (its own stdin, exit code, time limit), no case sees what
another wrote, a case the job did not run is run again alone, and a request with a worker free
runs at once, on its own."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.serve.server import Served, make_token, start

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("serve-coalesce")]

SLOTS = 2

#: What the program does is its stdin's: print twice the number, or crash, or sleep past its limit;
#: it also says whether a file that every case writes was there before it (it must never be).
PROGRAM = """
import os, sys, time
seen = os.path.exists("/tmp/mark") or os.path.exists("mark")
for where in ("/tmp/mark", "mark"):
    try:
        open(where, "w").write("x")
    except OSError:
        pass
word = sys.stdin.read().strip()
if word == "crash":
    print("crashing", file=sys.stderr)
    sys.exit(3)
if word == "sleep":
    time.sleep(30)
print(int(word) * 2, seen)
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-coalesce")
    everything = {"run_code": True, "concurrency": 64, "rate_per_s": 1000.0, "burst": 1000}
    tokens = {"verl": (make_token(), everything)}
    config = "[run_code]\nmax_memory_mb = 256\nmax_run_timeout_s = 10\n"
    env = {"VERIFIER_SLOTS_DIR": str(folder / "slots"), "VERIFIER_MAX_SANDBOXES": str(SLOTS)}
    server = start(folder, config, tokens, env=env)
    try:
        yield server
    finally:
        server.stop()


def post(served: Served, code: str, stdin: str, run_timeout: float = 5) -> dict[str, Any]:
    body = {"code": code, "stdin": stdin, "language": "python", "run_timeout": run_timeout}
    with served.client(served.tokens["verl"], timeout=300) as client:
        answer = client.post("/run_code", json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def cases_of(served: Served, evidence_id: str) -> int:
    with served.client(served.tokens["verl"]) as client:
        return len(client.get(f"/v1/evidence/{evidence_id}").json()["cases"])


def together(served: Served, stdins: list[str]) -> list[dict[str, Any]]:
    """`stdins` for PROGRAM sent at once while both workers are busy with sleepers of another
    program (so that they wait together, and may share a job)."""
    answers: dict[int, dict[str, Any]] = {}
    sleepers = [
        threading.Thread(target=lambda: post(served, "import time\ntime.sleep(6)\n", "", run_timeout=10))
        for _ in range(SLOTS)
    ]
    for thread in sleepers:
        thread.start()
    time.sleep(1.0)  # the sleepers hold both workers for 6 s

    def one(n: int) -> None:
        answers[n] = post(served, PROGRAM, stdins[n])

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(stdins))]
    for thread in threads:
        thread.start()
    for thread in threads + sleepers:
        thread.join(600)
    return [answers[n] for n in range(len(stdins))]


def test_each_request_gets_its_own_answer_and_sees_no_other_case(served: Served) -> None:
    stdins = ["1", "2", "crash", "3", "4", "5", "6", "7"]
    answers = together(served, stdins)
    for stdin, answer in zip(stdins, answers, strict=True):
        run = answer["run_result"]
        if stdin == "crash":
            assert answer["status"] == "Failed" and run["return_code"] == 3 and run["stderr"] == "crashing\n"
        else:
            assert answer["status"] == "Success", answer
            assert run["stdout"] == f"{int(stdin) * 2} False\n" and run["return_code"] == 0, answer
    shared = max(cases_of(served, a["evidence_id"]) for a in answers)
    assert shared > 1, "no two of the requests that waited together shared a job"
    assert json.dumps(answers).count('"evidence_id"') == len(stdins)


def test_cases_the_job_did_not_run_are_run_alone(served: Served) -> None:
    """Three cases past their time limit: the job stops after two (MAX_TIMEOUTS) and does not
    run the rest; those requests are run again alone and answered as they would be."""
    stdins = ["sleep", "sleep", "sleep", "8", "9"]
    answers = together(served, stdins)
    for stdin, answer in zip(stdins, answers, strict=True):
        if stdin == "sleep":
            assert answer["run_result"]["status"] == "TimeLimitExceeded", answer
        else:
            assert answer["run_result"]["stdout"] == f"{int(stdin) * 2} False\n", answer


def test_with_a_worker_free_requests_run_on_their_own(served: Served) -> None:
    """Idle server: two requests for the same program sent together run as two jobs, at once."""
    code = "import time\nstart = time.time()\ntime.sleep(3)\nprint(start, time.time())\n"
    answers: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda: answers.append(post(served, code, ""))) for _ in range(SLOTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert all(cases_of(served, a["evidence_id"]) == 1 for a in answers)
    spans = sorted(tuple(map(float, a["run_result"]["stdout"].split())) for a in answers)
    assert spans[1][0] < spans[0][1], f"the two runs did not overlap: {spans}"


def test_a_client_that_goes_away_leaves_the_others_answered(served: Served) -> None:
    """A member whose client disconnects before the job starts is dropped; the rest are answered."""
    sleepers = [
        threading.Thread(target=lambda: post(served, "import time\ntime.sleep(6)\n", "", run_timeout=10))
        for _ in range(SLOTS)
    ]
    for thread in sleepers:
        thread.start()
    time.sleep(1.0)
    body = {"code": PROGRAM, "stdin": "11", "language": "python", "run_timeout": 5}
    with pytest.raises(httpx.TimeoutException), httpx.Client(base_url=served.url, timeout=0.5) as client:
        client.post("/run_code", json=body, headers={"Authorization": f"Bearer {served.tokens['verl']}"})
    answer = post(served, PROGRAM, "12")
    for thread in sleepers:
        thread.join(600)
    assert answer["run_result"]["stdout"] == "24 False\n", answer


#: Looks everywhere a case might find another's input: the suite's folder, every process's
#: command line, environment and open files, the writable places; prints every secret it finds.
SNOOP = r"""
import glob, os, re, stat, sys
mine = sys.stdin.read().strip()
found = set()
def scan(data):
    for secret in re.findall(rb"secret-[0-9a-f]{16}", data):
        found.add(secret.decode())
def read(path, proc=False):
    try:
        if not proc and not stat.S_ISREG(os.stat(path).st_mode):
            return  # a pipe or a device would block
        with open(path, "rb") as fh:
            scan(fh.read(1 << 20))
    except OSError:
        pass
for root in ("/run", "/tmp", "/dev/shm", "/var/tmp", os.getcwd(), os.path.expanduser("~")):
    for dirpath, _, names in os.walk(root):
        for name in names:
            read(os.path.join(dirpath, name))
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for part in ("cmdline", "environ"):
            read(f"/proc/{pid}/{part}", proc=True)
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            read(fd)
print(mine, sorted(found - {mine}))
"""


def test_a_case_finds_no_other_members_input(served: Served) -> None:
    secrets = [f"secret-{n:016x}" for n in range(6)]
    answers: dict[int, dict[str, Any]] = {}
    sleepers = [
        threading.Thread(target=lambda: post(served, "import time\ntime.sleep(6)\n", "", run_timeout=10))
        for _ in range(SLOTS)
    ]
    for thread in sleepers:
        thread.start()
    time.sleep(1.0)

    def one(n: int) -> None:
        answers[n] = post(served, SNOOP, secrets[n], run_timeout=10)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(secrets))]
    for thread in threads:
        thread.start()
    for thread in threads + sleepers:
        thread.join(600)
    assert max(cases_of(served, answers[n]["evidence_id"]) for n in answers) > 1, "no job was shared"
    for n, secret in enumerate(secrets):
        assert answers[n]["run_result"]["stdout"] == f"{secret} []\n", answers[n]
