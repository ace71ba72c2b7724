"""`/run_code`'s `fetch_files` attacked through a real server on 127.0.0.1 and real containers.

The trusted side reads the files a program named after its run, before the reset; it sees
/run/trusted (the suite, its expected outputs) and runs as another uid. A program that knows which
files will be fetched lays traps for that read: symbolic links (to the suite, to /proc, in a
middle folder), hard links, a FIFO (a read that would block), a sparse file, more
files than the result has room for, a daemon that keeps writing the file; the request itself may
name absolute paths, `..` or /proc. None of it may hand back a byte the program could not read
itself, block the read, or outlive the reset; every file not sent says why (never cut silently).
"""

from __future__ import annotations

import ast
import base64
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import SETTLE_ATTEMPTS
from tests.serve.server import Served, make_token, start
from verifier.runner.protocol import MAX_FETCH_FILES, SUITE_DIR, fetch_bytes

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("fetch-files")]

OUTPUT_BYTES = 256 * 1024
#: What all the fetched files of one run may hold together with this server's output limit.
ROOM = fetch_bytes(OUTPUT_BYTES)
#: The one case's expected output and the suite's cases file, as the trusted side holds them.
CASES = f"{SUITE_DIR}/cases.jsonl"
MANIFEST = f"{SUITE_DIR}/suite.toml"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("fetch-files")
    rights = {"run_code": True, "suites": ["*"], "concurrency": 8, "rate_per_s": 1000.0, "burst": 1000}
    config = (
        f'policy = "reuse"\n[run_code]\nmax_memory_mb = 256\nmax_run_timeout_s = 10\noutput_bytes = {OUTPUT_BYTES}\n'
    )
    server = start(folder, config, {"evil": (make_token(), rights)}, env={"VERIFIER_MAX_SANDBOXES": "1"})
    try:
        yield server
    finally:
        server.stop()


def run(served: Served, code: str, fetch: list[str], timeout: float = 5) -> httpx.Response:
    with served.client(served.tokens["evil"], timeout=300) as client:
        for _ in range(SETTLE_ATTEMPTS):
            answer = client.post(
                "/run_code", json={"code": code, "language": "python", "run_timeout": timeout, "fetch_files": fetch}
            )
            if answer.status_code != 504:
                break
    return answer


def fetched(served: Served, code: str, fetch: list[str], timeout: float = 5) -> dict[str, Any]:
    answer = run(served, code, fetch, timeout)
    assert answer.status_code == 200, answer.text
    reply: dict[str, Any] = answer.json()
    assert reply["status"] != "SandboxError", reply
    return reply


def evidence_files(served: Served, reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    with served.client(served.tokens["evil"]) as client:
        evidence = client.get(f"/v1/evidence/{reply['evidence_id']}").json()
    return {f["path"]: f for f in evidence["cases"][-1]["files"]}


def no_trusted_bytes(reply: dict[str, Any]) -> None:
    """Nothing of the suite's files in the answer (its manifest names the case file and limits)."""
    text = str(reply) + "".join(base64.b64decode(v).decode("latin-1") for v in reply["files"].values())
    for marker in ("cases.jsonl", "time_limit_s", '"input"', "[program]"):
        assert marker not in text or marker in reply["message"] + reply["run_result"]["stdout"], (marker, reply)


def test_symbolic_links_to_the_suite_and_to_proc_are_never_followed(served: Served) -> None:
    code = f"""
import os
os.symlink({CASES!r}, 'expected')
os.symlink({MANIFEST!r}, 'manifest')
os.symlink('/proc/self/environ', 'environ')
os.symlink('/proc/1/root{CASES}', 'through_pid1')
os.symlink('/etc/hostname', 'readable')          # a file the program may read: still a link
os.symlink({SUITE_DIR!r}, 'suite_dir')           # a link in a middle folder
os.symlink('/etc', 'etc_dir')
os.makedirs('real')
os.symlink('../real', 'real_too')               # even a link that stays inside the folder
open('real/ok.txt', 'w').write('fine')
print('laid')
"""
    asked = [
        "expected",
        "manifest",
        "environ",
        "through_pid1",
        "readable",
        "suite_dir/cases.jsonl",
        "suite_dir/suite.toml",
        "etc_dir/hostname",
        "real_too/ok.txt",
        "real/ok.txt",
    ]
    reply = fetched(served, code, asked)
    assert reply["run_result"]["stdout"] == "laid\n", reply
    assert reply["files"] == {"real/ok.txt": base64.b64encode(b"fine").decode()}, reply
    no_trusted_bytes(reply)
    files = evidence_files(served, reply)
    for path in asked[:-1]:
        assert files[path]["content_b64_untrusted"] is None and "symbolic link" in files[path]["error"], files[path]
        assert repr(path) in reply["message"], reply["message"]


def test_hard_links_fifos_devices_and_unreadable_files(served: Served) -> None:
    """A hard link to a file the program does not own is never sent (whether the kernel let it be
    made is its `protected_hardlinks`: the program says which it could make); a FIFO is refused
    at once (never a read that waits for a writer); an unreadable file stays unread."""
    code = f"""
import os
made = []
for target in ({CASES!r}, '/etc/shadow', '/etc/passwd', '/usr/bin/python3', '/tmp'):
    try:
        os.link(target, 'link' + str(len(made)))
        made.append(target)
    except OSError:
        pass
os.mkfifo('pipe')
open('locked', 'w').write('x')
os.chmod('locked', 0)
for name in ('null', 'zero'):
    try:
        os.mknod(name, 0o666 | 0o020000, os.makedev(1, 3 if name == 'null' else 5))
    except OSError:
        pass
print(made)
"""
    asked = ["link0", "link1", "link2", "link3", "pipe", "locked", "null", "zero"]
    started = time.monotonic()
    reply = fetched(served, code, asked)
    assert time.monotonic() - started < 60, "the FIFO held the read"
    assert reply["files"] == {}, reply
    no_trusted_bytes(reply)
    files = evidence_files(served, reply)
    assert "not a regular file" in files["pipe"]["error"], files["pipe"]
    assert "may not read" in files["locked"]["error"], files["locked"]
    linked = ast.literal_eval(reply["run_result"]["stdout"])
    for index, target in enumerate(linked):
        error = files[f"link{index}"]["error"]
        assert error is not None and "not a file the program's user owns" in error, (target, error)


def test_paths_outside_the_folder_are_refused_before_any_run(served: Served) -> None:
    for asked in (
        ["/proc/self/environ"],
        [CASES],
        ["/tmp/candidate/solution.py"],
        ["../candidate/solution.py"],
        ["a/../../etc/passwd"],
        ["./a.txt"],
        ["a//b"],
        ["a\\..\\b"],
        ["x\x00y"],
        [f"f{n}" for n in range(MAX_FETCH_FILES + 1)],
        ["a" * 300],
    ):
        answer = run(served, "print(1)", asked)
        assert answer.status_code == 400 and answer.json()["error"] == "invalid", (asked, answer.text)
        assert "fetch_files" in answer.json()["reason"], answer.text


def test_files_past_the_room_are_said_never_cut(served: Served) -> None:
    """A file bigger than the result's room for files, a sparse file of 8 MiB, and many files that
    together pass it: each file sent is whole, those past the room are named in the message."""
    code = f"""
open('huge.bin', 'wb').write(b'h' * ({ROOM} + 1))
with open('sparse.bin', 'wb') as fh:
    fh.truncate(8 << 20)  # sparse: 8 MiB of size, nothing written
for n in range(20):
    open(f'part{{n}}.bin', 'wb').write(bytes([n]) * ({ROOM} // 8))
print('ok')
"""
    asked = ["huge.bin", "sparse.bin", *[f"part{n}.bin" for n in range(20)]]
    started = time.monotonic()
    reply = fetched(served, code, asked)
    assert time.monotonic() - started < 60
    assert reply["status"] == "Success", reply
    sent = reply["files"]
    assert "huge.bin" not in sent and "sparse.bin" not in sent
    assert 1 <= len(sent) <= 8, sorted(sent)
    for path, b64 in sent.items():
        n = int(path[4:-4])
        assert base64.b64decode(b64) == bytes([n]) * (ROOM // 8), path
    assert sum(len(base64.b64decode(v)) for v in sent.values()) <= ROOM
    for path in asked:
        assert (path in sent) != (repr(path) in reply["message"]), (path, reply["message"])
    assert "over the" in reply["message"]


def test_a_daemon_writing_the_file_is_killed_before_the_read_and_gone_after(served: Served) -> None:
    """The program leaves a daemon that keeps appending to the file it asked for (and holds no
    pipe, so the run ends): the reset kills it before the read, so the file comes back as it was
    at that moment, bounded, and the next program (the same sandbox: one slot, reuse) finds no
    process and no file of it."""
    code = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    devnull = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    with open('grow.txt', 'ab', buffering=0) as fh:
        while True:
            fh.write(b'x' * 4096)
            if fh.tell() >= (1 << 20):
                fh.seek(0)  # rewritten in place: never shorter than it was
time.sleep(0.5)
print(os.path.getsize('grow.txt') > 0)
"""
    started = time.monotonic()
    reply = fetched(served, code, ["grow.txt"])
    assert time.monotonic() - started < 60
    assert reply["run_result"]["stdout"] == "True\n", reply
    files = evidence_files(served, reply)
    record = files["grow.txt"]
    if record["content_b64_untrusted"] is not None:
        assert 0 < record["size"] <= ROOM
    else:
        assert "over the" in record["error"], record
    after = fetched(
        served,
        "import os\nme, others = os.getpid(), 0\n"
        "for p in os.listdir('/proc'):\n"
        "    try:\n"
        "        others += p.isdigit() and int(p) != me and os.stat('/proc/' + p).st_uid == os.getuid()\n"
        "    except OSError:\n"
        "        pass\n"
        "print(sorted(os.listdir('.')), others)",
        ["grow.txt"],
    )
    assert after["run_result"]["stdout"] == "['solution.py'] 0\n", after
    assert after["files"] == {}, after
