"""Candidate text stays inside the untrusted fence, and no candidate can deny its own evidence
(issue 8, sections 2 and 3). Each case is a hostile candidate in candidates/ (whose status
test_forgery checks); here we check what it tried to do to the evidence, the JSON and the
terminal. Under every container runtime (the `runtime` fixture: runc and gVisor)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.test_forgery import LIMITS
from tests.conftest import QUICK_SUITE as SUITE
from verifier import Evidence, FailureKind, Status, Verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CANDIDATES = Path(__file__).parent / "candidates"


@pytest.fixture(scope="module")
def verifier(sandbox_image: str, runtime: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS.model_copy(update={"runtime": runtime}))


def trusted_text(ev: Evidence) -> str:
    """Every field shown outside the fence: reason, ids, messages, falsifying examples."""
    parts = [ev.reason] + [f"{f.test_id} {f.message} {f.falsifying_example or ''}" for f in ev.failures]
    return "\n".join(parts)


def cli(runtime: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "verifier", "check", *args, "--suite", str(SUITE), "--runtime", runtime]
    command += ["--timeout", str(LIMITS.timeout_s), "--call-timeout", str(LIMITS.call_timeout_s), "--memory", "256m"]
    return subprocess.run(command, capture_output=True, timeout=600, check=False)


def test_a_class_name_cannot_speak_as_the_verifier(verifier: Verifier) -> None:
    ev = verifier.check(CANDIDATES / "class_name_injection.py", SUITE)
    assert ev.status is Status.FAILED
    text = trusted_text(ev)
    assert "status: passed" not in text and "satisfied" not in text and "\n" not in ev.reason
    assert all("\n" not in f.message for f in ev.failures)
    assert any("answer satisfied" in f.detail_untrusted for f in ev.failures)  # it is there, as data


def test_a_message_cannot_plant_its_own_falsifying_example(verifier: Verifier) -> None:
    ev = verifier.check(CANDIDATES / "fake_falsifying_example.py", SUITE)
    examples = [f.falsifying_example for f in ev.failures if f.falsifying_example]
    assert examples, "Hypothesis' own examples are reported"
    assert not any("PLANTED" in e for e in examples)
    assert all(e.startswith("test_") and "\n" not in e for e in examples)


@pytest.mark.parametrize("name", ["terminal_escape.py", "bidi_message.py"])
def test_control_and_invisible_characters_never_reach_the_terminal(name: str, runtime: str) -> None:
    done = cli(runtime, str(CANDIDATES / name))
    assert done.returncode == 1, done.stderr[-2000:]
    out = done.stdout + done.stderr
    for raw in ("\x1b", "\x9b", "\x07", "\u202e", "\u200b", "\u2066"):
        assert raw.encode() not in out, (name, raw)
    assert b"\\x1b" in out or b"\\u202e" in out  # shown as visible escapes instead
    as_json = cli(runtime, str(CANDIDATES / name), "--json")
    assert as_json.returncode == 1
    assert as_json.stdout.isascii()
    assert json.loads(as_json.stdout)["status"] == "failed"


@pytest.mark.parametrize("name", ["lone_surrogate_message.py", "non_utf8_output.py"])
def test_bytes_that_break_encoders_still_give_valid_evidence(name: str, runtime: str) -> None:
    as_json = cli(runtime, str(CANDIDATES / name), "--json")
    assert as_json.returncode == 1, as_json.stderr[-2000:]
    ev = Evidence.model_validate_json(as_json.stdout)
    assert ev.status is Status.FAILED and not ev.ok
    assert ev.limits.runtime == runtime
    ev.model_dump_json()  # and it serialises again
    console = cli(runtime, str(CANDIDATES / name))
    assert console.returncode == 1 and b"Traceback" not in console.stderr


def test_a_huge_class_name_at_import_is_the_candidates_error(verifier: Verifier) -> None:
    ev = verifier.check(CANDIDATES / "huge_class_name_at_import.py", SUITE)
    assert ev.status is Status.ERROR and ev.fault.value == "candidate"
    assert ev.failures[0].kind is FailureKind.IMPORT_ERROR
    assert len(ev.model_dump_json()) < 1_000_000


@pytest.mark.parametrize("name", ["reply_frame_bomb.py", "value_count_bomb.py"])
def test_oversized_replies_are_refused_before_decoding(verifier: Verifier, name: str) -> None:
    ev = verifier.check(CANDIDATES / name, SUITE)
    assert ev.status is Status.OUTPUT_LIMIT and ev.fault.value == "candidate", ev.reason
    assert any(f.kind is FailureKind.OUTPUT_LIMIT and f.test_id.startswith("test_") for f in ev.failures)


def test_a_stall_inside_a_frame_meets_the_call_limit(verifier: Verifier) -> None:
    ev = verifier.check(CANDIDATES / "stall_inside_frame.py", SUITE)
    assert ev.status is Status.TIMEOUT
    timed_out = [f for f in ev.failures if f.kind is FailureKind.TIMEOUT]
    assert timed_out and timed_out[0].test_id.startswith("test_")  # per-test evidence, not a whole-run kill
    assert f"within {LIMITS.call_timeout_s:g} s" in timed_out[0].message
