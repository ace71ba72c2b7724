"""The result line's budget (issue 21, section 5): whatever the candidate wrote, raised or made
its objects say, the runner's result line fits within the host's limit, `output_bytes +
RESULT_OVERHEAD_BYTES`, and a field cut to fit says so. The worst case is computed from the
protocol's own constants, so a change to one of them that breaks the sum fails here."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest

from verifier.runner import protocol
from verifier.runner.protocol import (
    CASE_FIELD_JSON,
    CASE_JSON_BYTES,
    ERROR_JSON_BYTES,
    FAILURE_FIELD_JSON,
    FAILURE_JSON_BYTES,
    MAX_CASES,
    MAX_DETAIL,
    MAX_EXAMPLE,
    MAX_FAILURES,
    MAX_LINE,
    MAX_SUMMARY,
    MAX_TEST_ID,
    RESULT_FIXED_JSON_BYTES,
    RESULT_OVERHEAD_BYTES,
    CaseRecord,
    FailureRecord,
    JobCounts,
    JobResult,
    bounded_result,
    fit,
    format_result_line,
    json_size,
    parse_result,
    split_result_line,
)
from verifier.runner.protocol.budget import FETCH_ERROR_JSON, FETCH_RECORD_JSON_BYTES

#: Characters that cost the most JSON bytes each: beyond the BMP (a surrogate pair, 12 bytes),
#: a control character and a lone surrogate (6), an invalid byte decoded as U+FFFD (6).
WORST_CHARS = ["\U0001f600", "\x01", "\ud800", "\ufffd", '"']
BIG_INT = -(2**63)
BIG_FLOAT = -1.2345678901234567e-300


def worst_text(n: int, char: str) -> str:
    return char * n


def worst_failure(char: str) -> FailureRecord:
    return FailureRecord(
        test_id=worst_text(10 * MAX_TEST_ID, char),
        kind="candidate_died",
        summary=worst_text(10 * MAX_SUMMARY, char),
        falsifying_example=worst_text(10 * MAX_EXAMPLE, char),
        detail_untrusted=worst_text(100 * MAX_DETAIL, char),
    )


def worst_case(char: str) -> CaseRecord:
    return CaseRecord(
        name=worst_text(10 * MAX_TEST_ID, char),
        outcome="output_limit",
        summary=worst_text(10 * MAX_SUMMARY, char),
        ran=False,
        time_s=BIG_FLOAT,
        cpu_s=BIG_FLOAT,
        memory_bytes=2**63,
        exit_code=BIG_INT,
        signal=BIG_INT,
        line=BIG_INT,
        output_line=BIG_INT,
        expected_line=worst_text(10 * MAX_LINE, char),
        got_line_untrusted=worst_text(10 * MAX_LINE, char),
        stderr_bytes=2**63,
    )


def worst_result(char: str, output_bytes: int, *, failures: int = MAX_FAILURES, cases: int = MAX_CASES) -> JobResult:
    return JobResult(
        runner="pytest",
        exit_code=BIG_INT,
        counts=JobCounts(2**63, 2**63, 2**63, 2**63, 2**63),
        failures=[worst_failure(char)] * failures,
        failures_total=2**63,
        import_failed=True,
        calls=2**63,
        candidate_output=worst_text(output_bytes, char),
        candidate_output_bytes=2**63,
        tests_s=BIG_FLOAT,
        host_wait_s=BIG_FLOAT,
        sandbox_error=worst_text(10 * MAX_SUMMARY, char),
        oom=True,
        kind="program",
        cases=[worst_case(char)] * cases,
        kernel="gvisor",
    )


def payload(line: bytes) -> bytes:
    split = split_result_line(line.rstrip(b"\n"))
    assert split is not None
    return split[2]


def compact(value: object) -> int:
    return len(json.dumps(protocol.plain(value), ensure_ascii=True, separators=(",", ":")))


def test_the_budget_adds_up() -> None:
    """The sum the host relies on, from the constants: a record with its text fields at their
    budgets and its other fields at their largest fits its record's budget, and every record,
    as many as are allowed, fits in the overhead the host grants beyond the candidate's output."""
    longest_kind = max(protocol.FAILURE_KINDS, key=len)
    bare_failure = FailureRecord(test_id="", kind=longest_kind, summary="", falsifying_example="", detail_untrusted="")
    # each empty text field is '""' in the bare record, and its whole budget (quotes included) in the worst
    assert compact(bare_failure) - 2 * len(FAILURE_FIELD_JSON) + sum(FAILURE_FIELD_JSON.values()) <= FAILURE_JSON_BYTES
    bare_case = worst_case("a")
    bare_case = CaseRecord(
        **{**vars(bare_case), "name": "", "summary": "", "expected_line": "", "got_line_untrusted": ""}
    )
    assert compact(bare_case) - 2 * len(CASE_FIELD_JSON) + sum(CASE_FIELD_JSON.values()) <= CASE_JSON_BYTES
    bare = worst_result("a", 0, failures=0, cases=0)
    bare = JobResult(**{**vars(bare), "sandbox_error": "", "candidate_output": ""})
    # the rest: its own fields, the sandbox error at its budget, and a comma between each record
    commas = MAX_FAILURES + MAX_CASES
    assert compact(bare) - 2 + ERROR_JSON_BYTES + commas <= RESULT_FIXED_JSON_BYTES
    # a fetched file's record without its content: its path (MAX_FETCH_PATH characters of 12 bytes
    # at worst) and its error at their budgets, its size at its largest, and a comma
    bare_file = protocol.FetchedRecord(path="", error="", size=2**63)
    assert compact(bare_file) - 4 + 12 * protocol.MAX_FETCH_PATH + 2 + FETCH_ERROR_JSON + 1 <= FETCH_RECORD_JSON_BYTES
    assert (
        MAX_FAILURES * FAILURE_JSON_BYTES
        + MAX_CASES * CASE_JSON_BYTES
        + RESULT_FIXED_JSON_BYTES
        + protocol.MAX_FETCH_FILES * FETCH_RECORD_JSON_BYTES
        <= RESULT_OVERHEAD_BYTES
    )


@pytest.mark.parametrize("char", WORST_CHARS, ids=["astral", "control", "surrogate", "replacement", "quote"])
@pytest.mark.parametrize("output_bytes", [1024, 1024**2])
def test_the_worst_result_fits_the_hosts_limit(char: str, output_bytes: int) -> None:
    line = format_result_line("nonce", False, worst_result(char, output_bytes), output_bytes)
    body = payload(line)
    assert len(body) <= output_bytes + RESULT_OVERHEAD_BYTES
    parsed = parse_result(body, max_bytes=output_bytes + RESULT_OVERHEAD_BYTES)  # the host reads it
    assert len(parsed.failures) == MAX_FAILURES and len(parsed.cases) == MAX_CASES
    raw = json.loads(body)
    assert json_size(raw["candidate_output"]) <= output_bytes
    for failure in raw["failures"]:
        assert len(json.dumps(failure, separators=(",", ":"))) <= FAILURE_JSON_BYTES
        for name, budget in FAILURE_FIELD_JSON.items():
            assert json_size(failure[name]) <= budget
    for case in raw["cases"]:
        assert len(json.dumps(case, separators=(",", ":"))) <= CASE_JSON_BYTES
        for name, budget in CASE_FIELD_JSON.items():
            assert json_size(case[name]) <= budget
    rest = {k: v for k, v in raw.items() if k not in ("failures", "cases", "candidate_output")}
    assert len(json.dumps(rest, separators=(",", ":"))) + 64 <= RESULT_FIXED_JSON_BYTES


def test_a_cut_field_says_so_and_keeps_what_says_the_most() -> None:
    detail = "Traceback ...\n" + "x" * 100_000 + "\nE   ValueError: the end"
    kept = fit(detail, FAILURE_FIELD_JSON["detail_untrusted"], max_chars=MAX_DETAIL, keep_end=True)
    assert kept.endswith("E   ValueError: the end") and kept.startswith(" [verifier: ")
    assert "characters cut]" in kept and len(kept) <= MAX_DETAIL
    output = "hello " + "\x01" * 10_000
    shown = fit(output, 1024)
    assert shown.startswith("hello ") and shown.endswith("characters cut] ") and json_size(shown) <= 1024
    assert fit("short and plain", 1024) == "short and plain"  # what fits is left as it is
    assert fit("a\ud800b", 1024) == "a\ufffdb"  # and made valid Unicode
    assert fit("x" * 100, 4) == ""  # no room even for the marker: nothing rather than too much


def test_many_failures_keep_their_count() -> None:
    record = FailureRecord(test_id="t", kind="exception", summary="s")
    result = JobResult(runner="direct", exit_code=1, counts=JobCounts(), failures=[record] * 80, failures_total=80)
    bounded = bounded_result(result, 1024)
    assert len(bounded.failures) == MAX_FAILURES and bounded.failures_total == 80


def test_a_result_without_an_output_budget_is_still_bounded() -> None:
    """Fakes and old callers pass no output budget: the records are bounded all the same."""
    line = format_result_line("n", False, worst_result("\U0001f600", 0, cases=0))
    assert len(payload(line)) <= RESULT_OVERHEAD_BYTES


@pytest.mark.parametrize("output_bytes", [1024**2, 4 * 1024**2])
@pytest.mark.parametrize("cases", [1, 7, MAX_CASES])
def test_kept_outputs_share_the_candidates_budget(output_bytes: int, cases: int) -> None:
    """compare = "none": each case's stdout and stderr come back (base64), as much as
    `kept_output_bytes` lets a program write; all of them and the run's candidate output together
    still fit the host's limit, and an output over its share (which the runner never sends) is
    dropped rather than let through."""
    kept = protocol.kept_output_bytes(output_bytes, cases)
    full = base64.b64encode(b"\xff" * kept).decode()
    record = CaseRecord(name="c", outcome="passed", summary="s", stdout_b64=full, stderr_b64=full, stderr_bytes=kept)
    result = JobResult(
        runner="pytest",
        exit_code=0,
        counts=JobCounts(),
        candidate_output="\x01" * output_bytes,
        kind="program",
        cases=[record] * cases,
    )
    body = payload(format_result_line("n", False, result, output_bytes))
    assert len(body) <= output_bytes + RESULT_OVERHEAD_BYTES
    parsed = parse_result(body, max_bytes=output_bytes + RESULT_OVERHEAD_BYTES)
    if kept:
        assert all(c.stdout_b64 == full and c.stderr_b64 == full for c in parsed.cases)
    too_much = replace(record, stdout_b64=base64.b64encode(b"x" * output_bytes).decode())
    over = payload(format_result_line("n", False, replace(result, cases=[too_much] * cases), output_bytes))
    assert len(over) <= output_bytes + RESULT_OVERHEAD_BYTES
    assert parse_result(over, max_bytes=output_bytes + RESULT_OVERHEAD_BYTES).cases[0].stdout_b64 is None


def test_a_kept_output_that_is_not_base64_is_refused() -> None:
    line = format_result_line(
        "n", False, JobResult(runner="pytest", exit_code=0, counts=JobCounts(), kind="program", cases=[]), 1024
    )
    raw = json.loads(payload(line))
    raw["cases"] = [{"name": "c", "outcome": "passed", "summary": "s", "stdout_b64": "not base64!"}]
    with pytest.raises(protocol.ProtocolError, match="stdout_b64"):
        parse_result(json.dumps(raw).encode(), max_bytes=1024 + RESULT_OVERHEAD_BYTES)


@pytest.mark.parametrize("char", WORST_CHARS, ids=["astral", "control", "surrogate", "replacement", "quote"])
@pytest.mark.parametrize("output_bytes", [64 * 1024, 4 * 1024**2])
def test_fetched_files_fit_beside_everything_else(char: str, output_bytes: int) -> None:
    """compare = "none" with fetch_files: the fetched files' contents (as much as `fetch_bytes`
    lets the reader take), their records at their worst (paths and errors of the worst
    characters, on every case), the kept outputs and the candidate output together still fit the
    host's limit; a content past the room is dropped and its record says so, never cut."""
    room = protocol.fetch_bytes(output_bytes)
    share = room // protocol.MAX_FETCH_FILES
    content = base64.b64encode(b"\xff" * share).decode()
    files = [
        protocol.FetchedRecord(path=worst_text(protocol.MAX_FETCH_PATH, char) + str(n), b64=content, size=share)
        for n in range(protocol.MAX_FETCH_FILES)
    ]
    errors = [protocol.FetchedRecord(path=worst_text(10 * protocol.MAX_FETCH_PATH, char), error=char * 5000)] * 40
    kept = protocol.kept_output_bytes(output_bytes, 1)
    full = base64.b64encode(b"\xff" * kept).decode()
    last = replace(worst_case(char), stdout_b64=full, stderr_b64=full, files=files)
    result = replace(
        worst_result(char, output_bytes), cases=[replace(worst_case(char), files=errors)] * (MAX_CASES - 1) + [last]
    )
    body = payload(format_result_line("n", False, result, output_bytes))
    assert len(body) <= output_bytes + RESULT_OVERHEAD_BYTES
    parsed = parse_result(body, max_bytes=output_bytes + RESULT_OVERHEAD_BYTES)
    assert sum(len(c.files) for c in parsed.cases) <= protocol.MAX_FETCH_FILES
    # Alone on the last case, every file within the room comes back whole.
    alone = replace(result, cases=[replace(worst_case(char), files=files)])
    parsed = parse_result(payload(format_result_line("n", False, alone, output_bytes)), max_bytes=10**9)
    assert [f.b64 for f in parsed.cases[0].files] == [content] * protocol.MAX_FETCH_FILES
    # One past the room loses its content, and says so.
    over = [*files[:-1], replace(files[-1], b64=base64.b64encode(b"x" * output_bytes).decode(), size=output_bytes)]
    parsed = parse_result(
        payload(
            format_result_line("n", False, replace(alone, cases=[replace(worst_case(char), files=over)]), output_bytes)
        ),
        max_bytes=output_bytes + RESULT_OVERHEAD_BYTES,
    )
    assert parsed.cases[0].files[-1].b64 is None and "over the result's" in (parsed.cases[0].files[-1].error or "")


def test_a_fetched_records_size_must_be_its_contents() -> None:
    line = format_result_line(
        "n", False, JobResult(runner="pytest", exit_code=0, counts=JobCounts(), kind="program", cases=[]), 1024
    )
    raw = json.loads(payload(line))
    for bad in (
        {"path": "a", "b64": "eA==", "size": 2},
        {"path": "a"},
        {"path": "a", "b64": "eA==", "size": 1, "error": "e"},
    ):
        raw["cases"] = [{"name": "c", "outcome": "passed", "summary": "s", "files": [bad]}]
        with pytest.raises(protocol.ProtocolError, match="files"):
            parse_result(json.dumps(raw).encode(), max_bytes=1024 + RESULT_OVERHEAD_BYTES)
