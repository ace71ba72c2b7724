"""Issue 37 §4, end to end: a `verifier bench io` run on a machine whose only sandbox slot another
process holds. The run waits for it, its progress line says so, and the verdicts are the ones
of an unhindered run: the wait is never charged, so the infinite loop is the candidate's
`timeout`, not `overloaded`.

No timing is asserted: the test releases the slot only once it has seen the run queued at the
slots' door, and then only after a pause, so the run has waited whatever the machine's speed."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

HOLD_SLOT = """
import sys
from pathlib import Path
from verifier.sandbox.admission import Admission
with Admission(1, folder=Path(sys.argv[1])).slot():
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""

PROBLEM = {"problem_id": "echo", "tests": [{"input": "7\n", "output": "7\n"}], "time_limit_s": 1.0}
PROGRAMS = {
    "right": "print(input())\n",
    "wrong": "print(int(input()) + 1)\n",
    "loops": "while True:\n    pass\n",
}
EXPECTED = {"right": "passed", "wrong": "failed", "loops": "timeout"}


def someone_at_the_door(folder: Path) -> bool:
    """Whether a job holds the slots' door lock: it is queued for a slot (`Admission._door`)."""
    path = folder / "door"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the lock if we took it
    return False


@pytest.mark.docker
@pytest.mark.raw_overload
def test_a_bench_run_that_waits_for_a_slot_says_so_and_its_verdicts_do_not_change(
    sandbox_image: str, tmp_path: Path
) -> None:
    slots = tmp_path / "slots"
    slots.mkdir()
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps(PROBLEM) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"problem_id": "echo", "program": p, "name": n}) + "\n" for n, p in PROGRAMS.items())
    )
    env = {**os.environ, "VERIFIER_SLOTS_DIR": str(slots), "VERIFIER_MAX_SANDBOXES": "1", "VERIFIER_IMAGE_PRUNE": "0"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SLOT, str(slots)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    run = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        run = subprocess.Popen(
            [sys.executable, "-m", "verifier", "bench", "io", str(samples), "--problems", str(problems), "--k", "1",
             "--workers", "1", "--json-out", str(tmp_path / "summary.json")],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 300  # the pool's first container, on a busy machine
        while not someone_at_the_door(slots):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the bench run never queued for a slot"
            time.sleep(0.05)
        time.sleep(1.5)  # the run has now waited at least this long, however fast the machine is
        assert run.poll() is None  # it is still waiting: nothing ran while the slot was held
        assert holder.stdin is not None
        holder.stdin.close()  # the slot comes free
        holder.wait(30)
        _out, err = run.communicate(timeout=600)
    finally:
        holder.kill()
        holder.wait()
        if run is not None and run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    rows = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert {r["name"]: r["status"] for r in rows} == EXPECTED, [r.get("reason") for r in rows]
    assert (summary["overloaded"], summary["infra_errors"], summary["passed"]) == (0, 0, 1)
    assert summary["slot_wait_s"] >= 1.5
    words = " ".join(err.split())
    assert "waiting for a machine slot" in words and "s waited" in words, err
