"""Ctrl-C in the middle of a `verifier bench humaneval` run, then the same command again: the
second run verifies only what the first did not finish (issue 25, section 4). A real CLI
process, started as a terminal starts it (SIGINT not ignored), a real SIGINT, the real engine."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from verifier.bench import humaneval as he
from verifier.sandbox.hardening import LABEL_OWNER_PID

PROBLEMS = he.load_problems()
QUICK = 4
SLOW = 26
#: HumanEval/2's check calls the candidate three times: 0.6 s of sleep a sample, so the slow
#: samples keep a run going for 26 x 0.6 / 2 = 7.8 s at the least, however fast the host.
SLEEPER = "    import time\n    time.sleep(0.2)\n    return number % 1.0\n# sample {n}\n"


def write_samples(path: Path) -> None:
    quick = ["HumanEval/0", "HumanEval/12", "HumanEval/53", "HumanEval/1"][:QUICK]
    lines = [{"task_id": t, "completion": PROBLEMS[t].line["canonical_solution"]} for t in quick]
    lines += [{"task_id": "HumanEval/2", "completion": SLEEPER.format(n=n)} for n in range(SLOW)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def start(samples: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "verifier", "bench", "humaneval", str(samples), "--workers", "2", "--k", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.docker
@pytest.mark.slow
def test_ctrl_c_then_the_same_command_verifies_only_what_is_missing(
    sandbox_image: str, docker_client: Any, tmp_path: Path
) -> None:
    samples = tmp_path / "samples.jsonl"
    write_samples(samples)
    store = Path(f"{samples}_evidence.jsonl")
    results = Path(f"{samples}_results.jsonl")
    first = start(samples)
    try:
        for _ in range(6000):  # until two verdicts are stored (polling, a bound against a hang)
            if lines(store) >= 2 or first.poll() is not None:
                break
            time.sleep(0.1)
        assert first.poll() is None, first.communicate()[1][-2000:]
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=600)  # a bound against a hang: cleanup is slow on a busy host
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode != 0 and b"Traceback" not in err, err[-2000:]
    assert not results.exists()  # nothing half-written: the store holds the progress
    found = docker_client.api.containers(all=True, filters={"label": f"{LABEL_OWNER_PID}={first.pid}"})
    assert found == []
    kept = lines(store)
    assert 2 <= kept < QUICK + SLOW

    second = start(samples)
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, err[-2000:]
    summary = json.loads(out)
    assert summary["from_store"] == kept  # every stored verdict served, none verified again
    assert summary["verified"] == QUICK + SLOW - kept  # the sandbox jobs of this run: only the missing ones
    assert lines(store) == QUICK + SLOW  # each sample verified exactly once over both runs
    assert summary["passed"] == QUICK + SLOW
    rows = [json.loads(x) for x in results.read_text().splitlines()]
    assert len(rows) == QUICK + SLOW and all(r["passed"] for r in rows)
