"""The host-runner protocol: both sides agree, and the host checks what it receives."""

from __future__ import annotations

import io
import json
import typing
from dataclasses import asdict

import pytest

from verifier.evidence import FailureKind
from verifier.limits import Limits
from verifier.runner import protocol
from verifier.runner.protocol import (
    FailureRecord,
    JobConfig,
    JobCounts,
    JobResult,
    ProtocolError,
    encode_job,
    format_result_line,
    parse_result,
    read_job,
    split_result_line,
)
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.hardening import container_kwargs
from verifier.suite import Manifest

CONFIG = JobConfig(budget_s=5, call_timeout_s=1, output_bytes=1024, reply_bytes=65536)


def test_the_vocabularies_are_the_same_on_both_sides() -> None:
    assert [k.value for k in FailureKind] == list(protocol.FAILURE_KINDS)
    assert typing.get_args(Manifest.model_fields["runner"].annotation) == protocol.RUNNERS
    assert typing.get_args(Manifest.model_fields["candidate_process"].annotation) == protocol.CANDIDATE_PROCESS
    assert typing.get_args(Manifest.model_fields["trusted_process"].annotation) == protocol.TRUSTED_PROCESS
    kw = container_kwargs(SandboxJob(image="i", command=["x"], limits=Limits(), mode="launcher"), {})
    tmpfs = kw["host_config"]["tmpfs"]
    assert f"uid={protocol.TRUSTED_UID}" in tmpfs[protocol.TRUSTED_DIR]
    assert f"uid={protocol.CANDIDATE_UID}" in tmpfs[protocol.SCRATCH_DIR]
    assert len({protocol.TRUSTED_UID, protocol.CANDIDATE_UID, protocol.ZYGOTE_UID, 0}) == 4


def test_a_job_round_trips_and_other_versions_are_refused() -> None:
    candidate_files = {"solution.py": b"def f(): pass\n"}
    data = encode_job("n0", ["solution"], candidate_files, {"test_a.py": b"x", "sub/t.py": b"\x00\xff"}, CONFIG)
    header, candidate, files = read_job(io.BytesIO(data))  # type: ignore[misc]
    assert (header.nonce, header.modules, header.config) == ("n0", ["solution"], CONFIG)
    assert candidate == candidate_files
    assert files == {"test_a.py": b"x", "sub/t.py": b"\x00\xff"}
    assert read_job(io.BytesIO(b"")) is None
    head, _, rest = data.partition(b"\n")
    old = json.dumps({**json.loads(head), "version": 2}).encode()
    with pytest.raises(ProtocolError, match="version"):
        read_job(io.BytesIO(old + b"\n" + rest))


def test_a_job_cannot_write_outside_its_folders() -> None:
    for cand, suite in (({"solution.py": b"x=1"}, {"../escape.py": b"x"}), ({"/etc/x.py": b"x=1"}, {"t.py": b""})):
        data = encode_job("n", ["solution"], cand, suite, CONFIG)
        with pytest.raises(ProtocolError, match="refusing"):
            read_job(io.BytesIO(data))


def test_module_names_of_a_tree() -> None:
    paths = ["pkg/__init__.py", "pkg/sub/a.py", "top.py", "data.txt", "bad-name.py", "pkg/sub/__init__.py"]
    assert protocol.module_names(paths) == ["pkg", "pkg.sub", "pkg.sub.a", "top"]


def result(**fields: object) -> JobResult:
    base: dict[str, object] = {"runner": "pytest", "exit_code": 0, "counts": JobCounts(expected=1, passed=1)}
    base.update(fields)
    return JobResult(**base)  # type: ignore[arg-type]


def test_result_lines_round_trip_with_the_recycle_flag_outside_the_json() -> None:
    line = format_result_line("abc", True, result(candidate_output="x\ud800y"))
    nonce, recycle, payload = split_result_line(line.rstrip(b"\n"))  # type: ignore[misc]
    assert (nonce, recycle) == ("abc", True)
    parsed = parse_result(payload, max_bytes=1 << 20)
    assert parsed.counts == JobCounts(expected=1, passed=1)
    assert parsed.candidate_output == "x\ufffdy"  # a lone surrogate never reaches the host's encoders
    assert split_result_line(b"VERIFIER-RESULT abc 2 {}") is None
    assert split_result_line(b"something else") is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"exit_code": "0"}, "exit_code"),
        ({"counts": {"expected": -1}}, "negative"),
        ({"counts": {"expected": True}}, "expected"),
        ({"failures": [{"test_id": "t", "kind": "passed_really", "summary": "s"}]}, "unknown"),
        ({"failures": [{"test_id": "t", "kind": "assertion", "summary": 3}]}, "summary"),
        ({"failures": [{"test_id": "t", "kind": "assertion", "summary": "s"}] * 51}, "too many"),
        ({"runner": "mine"}, "runner"),
        ({"kernel": "gVisor, trust me"}, "kernel"),
        ({"kernel": None}, "kernel"),
    ],
)
def test_malformed_results_are_refused(change: dict[str, object], words: str) -> None:
    raw = {**asdict(result()), **change}
    with pytest.raises(ProtocolError, match=words):
        parse_result(json.dumps(raw).encode(), max_bytes=1 << 20)


def test_results_over_the_size_limit_are_refused_before_decoding() -> None:
    with pytest.raises(ProtocolError, match="limit"):
        parse_result(b"[" * 2000, max_bytes=1000)


def test_trusted_fields_arrive_on_one_bounded_line() -> None:
    record = FailureRecord(test_id="t\nstatus: passed", kind="assertion", summary="a\x1bc" + "x" * 1000)
    line = format_result_line("n", False, result(failures=[record], failures_total=1))
    parsed = parse_result(split_result_line(line.rstrip(b"\n"))[2], max_bytes=1 << 20)  # type: ignore[index]
    failure = parsed.failures[0]
    assert "\n" not in failure.test_id and "\x1b" not in failure.summary
    assert len(failure.summary) <= protocol.MAX_SUMMARY


def test_a_result_carries_the_kernel_its_maker_observed() -> None:
    """Made on this host (not gVisor): "linux", from the kernel itself, whatever the environment says."""
    import os

    os.environ[protocol.KERNEL_ENV] = "gvisor"  # what a host asks for is not what the kernel is
    try:
        made = result()
    finally:
        del os.environ[protocol.KERNEL_ENV]
    assert made.kernel == protocol.observed_kernel() == "linux"
    line = format_result_line("n", False, made)
    assert parse_result(split_result_line(line.rstrip(b"\n"))[2], max_bytes=1 << 20).kernel == "linux"  # type: ignore[index]


# -- progress lines ------------------------------------------------------------------------
def test_a_progress_line_is_read_back_only_with_its_own_nonce() -> None:
    line = protocol.format_progress_line("abc123", 3, 16).rstrip(b"\n")
    assert protocol.parse_progress_line(line, "abc123") == (3, 16)
    assert protocol.parse_progress_line(line, "abc124") is None  # another job's (or a guess)
    for forged in (
        b"VERIFIER-PROGRESS abc123 17 16",  # more done than collected
        b"VERIFIER-PROGRESS abc123 -1 16",
        b"VERIFIER-PROGRESS abc123 3",
        b"VERIFIER-PROGRESS abc123 3 16 extra",
        b"VERIFIER-PROGRESS abc123 \xd9\xa3 16",  # a non-ASCII digit
        b"VERIFIER-PROGRESS abc123 1 99999999999",
        b"VERIFIER-RESULT abc123 0 {}",
    ):
        assert protocol.parse_progress_line(forged, "abc123") is None, forged


def test_progress_is_throttled_but_the_total_and_the_end_always_go() -> None:
    from verifier.runner.progress import Progress

    sent: list[tuple[int, int]] = []
    progress = Progress(lambda done, total: sent.append((done, total)), interval_s=3600)
    progress.collected(5)
    for _ in range(5):
        progress.one_done()
    assert sent == [(0, 5), (5, 5)]
    progress.one_done()  # a report past the end (a test that errors in teardown) stays at the total
    assert progress.done == 5
    silent = Progress()
    silent.collected(2)
    silent.one_done()  # no sender: nothing to do, no failure
