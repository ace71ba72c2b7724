"""The result line's budget: every text field bounded in JSON bytes before the line is written,
so the line fits within `output_bytes + RESULT_OVERHEAD_BYTES` whatever the candidate wrote."""

from __future__ import annotations

import json
from dataclasses import replace

from . import constants
from .records import CaseRecord, FailureRecord, FetchedRecord, JobResult
from .strings import clean

# -- the result line's budget ----------------------------------------------------------------
# A result line is ASCII JSON (`format_result_line`), so one character of text costs 1 byte
# (printable ASCII), 2 (`\n`, `"`), 6 (a control character, any other BMP character, U+FFFD
# for invalid UTF-8) or 12 (a character beyond the BMP: a surrogate pair). The candidate
# controls much of that text (its output, its exception messages, what its objects say about
# themselves), so the runner bounds every text field in JSON bytes, not characters, before the
# line is written (`bounded_result`); a field cut to fit says so (`cut_marker`). Every field's
# budget below is a sum the host can check: at most MAX_FAILURES failures of FAILURE_JSON_BYTES,
# MAX_CASES cases of CASE_JSON_BYTES, RESULT_FIXED_JSON_BYTES for the rest, and the candidate's
# output in at most `output_bytes` (the limit the caller set) of JSON. So the line always fits
# within `output_bytes + RESULT_OVERHEAD_BYTES`, whatever the candidate wrote or raised
# (tests/runner/test_result_budget.py computes the worst case from these constants).
#: JSON bytes (quotes included) of each text field of a failure record. A test id gets room for
#: MAX_TEST_ID characters of any kind (12 bytes each: never cut below the host's own limit).
FAILURE_FIELD_JSON = {
    "test_id": 12 * constants.MAX_TEST_ID + 2,
    "summary": 1024,
    "falsifying_example": 4096,
    "detail_untrusted": 8192,
}
#: JSON bytes of one failure record: its text fields, its kind, keys and punctuation.
FAILURE_JSON_BYTES = 20 * 1024
#: JSON bytes (quotes included) of each text field of a program case's record.
CASE_FIELD_JSON = {"name": 512, "summary": 512, "expected_line": 256, "got_line_untrusted": 256}
#: JSON bytes of one case record: its text fields, outcome, numbers, keys and punctuation.
CASE_JSON_BYTES = 2 * 1024
#: JSON bytes of a result's sandbox error (a trusted summary).
ERROR_JSON_BYTES = 1024
#: JSON bytes of everything in a result besides its failures, cases and candidate output:
#: keys, vocabulary, counts and numbers, the sandbox error, the list and object punctuation.
RESULT_FIXED_JSON_BYTES = 4 * 1024
#: JSON bytes of a program's compile record (records.CompileRecord: numbers and a trusted summary
#: of at most MAX_SUMMARY characters from fixed templates).
COMPILE_JSON_BYTES = 2 * 1024
#: JSON bytes of one fetched file's record without its content (`records.FetchedRecord`): a path
#: of at most MAX_FETCH_PATH characters (12 bytes each at worst), a trusted error of at most
#: FETCH_ERROR_JSON bytes, the size, keys and punctuation. Contents are paid from `output_bytes`.
FETCH_ERROR_JSON = 512
FETCH_RECORD_JSON_BYTES = 12 * constants.MAX_FETCH_PATH + FETCH_ERROR_JSON + 512
#: Result lines beyond the candidate output they carry (failures, cases, counts, fetched files'
#: records without their contents).
RESULT_OVERHEAD_BYTES = (
    constants.MAX_FAILURES * FAILURE_JSON_BYTES
    + constants.MAX_CASES * CASE_JSON_BYTES
    + RESULT_FIXED_JSON_BYTES
    + COMPILE_JSON_BYTES
    + constants.MAX_FETCH_FILES * FETCH_RECORD_JSON_BYTES
)


#: compare = "none": the bytes of stdout (and as many of stderr) one case's program may write and
#: have back, of a run of `cases` cases; more is an output_limit. Both come back base64 (4 bytes
#: for 3, whatever they hold), so all of them together take at most half of `output_bytes` of the
#: result line's JSON; the run's candidate output (stderr log) gets the rest (`bounded_result`).
def kept_output_bytes(output_bytes: int, cases: int) -> int:
    share = output_bytes // 2 // max(1, cases)  # JSON bytes for one case's two outputs
    return max(0, (share - 16) * 3 // 8)  # two base64 strings of this, with their quotes, fit in it


#: compare = "none" with `fetch_files`: the JSON bytes the fetched files' contents (base64, with
#: their quotes) may take of a result line of `output_bytes`: a quarter of it (the kept outputs
#: take at most half, the run's candidate output the rest).
def fetched_json_bytes(output_bytes: int) -> int:
    return output_bytes // 4


#: ... and the bytes of the files themselves, all of them together, that fit in it (base64 is 4
#: bytes for 3, plus padding and quotes per file): a file that would go past it is not sent and
#: its record says so (`FetchedRecord.error`).
def fetch_bytes(output_bytes: int) -> int:
    return max(0, (fetched_json_bytes(output_bytes) - 8 * constants.MAX_FETCH_FILES) * 3 // 4)


def json_size(text: str) -> int:
    """Bytes of `text` as a string in a result line's JSON (ASCII, quotes included)."""
    return len(json.dumps(text, ensure_ascii=True))


def cut_marker(cut: int, total: int) -> str:
    """What stands in a text field for the characters cut from it to fit the result line."""
    return f" [verifier: {cut} of {total} characters cut] "


def _fitting_prefix(text: str, room: int) -> int:
    """The most characters from the start of `text` (valid Unicode) whose JSON, quotes left out,
    takes at most `room` bytes: the text is encoded once and cut there, backing off an escape
    the cut would split (at most 11 bytes), and off half a surrogate pair."""
    encoded = json.dumps(text, ensure_ascii=True)[1:-1]
    if len(encoded) <= room:
        return len(text)
    for cut in range(room, max(-1, room - 12), -1):
        try:
            piece: str = json.loads(f'"{encoded[:cut]}"')
        except ValueError:
            continue  # the cut split an escape
        kept = len(piece)
        return kept - 1 if kept and "\ud800" <= piece[-1] <= "\udbff" else kept
    return 0


def fit(text: str, max_json: int, *, max_chars: int | None = None, keep_end: bool = False) -> str:
    """`text` as valid Unicode that takes at most `max_json` bytes of a result line's JSON and has
    at most `max_chars` characters. What does not fit is cut (from the end, or from the start
    when `keep_end`: a traceback's last lines say the most) and `cut_marker` says how much."""
    total = len(text)
    # No more characters can be kept than there are bytes: clean (per character) only those.
    most = max(0, min(total, max_json if max_chars is None else min(max_chars, max_json)))
    text = clean(text[total - most :] if keep_end else text[:most])
    if most == total and json_size(text) <= max_json:
        return text
    longest = cut_marker(total, total)  # ASCII and printable: one JSON byte a character
    room_json = max_json - 2 - len(longest)
    room_chars = most - len(longest)
    if room_json < 0 or room_chars < 0:
        return ""
    # Cutting from the start is cutting the reversed text from its end (a character is one code
    # point either way, and costs the same).
    piece = (text[::-1] if keep_end else text)[:room_chars]
    kept = _fitting_prefix(piece, room_json)
    marker = cut_marker(total - kept, total)
    return marker + piece[:kept][::-1] if keep_end else piece[:kept] + marker


def bounded_failure(record: FailureRecord) -> FailureRecord:
    """`record` with every text field within its JSON budget (`FAILURE_FIELD_JSON`)."""
    budget = FAILURE_FIELD_JSON
    example = record.falsifying_example
    return FailureRecord(
        test_id=fit(record.test_id, budget["test_id"], max_chars=constants.MAX_TEST_ID),
        kind=record.kind if record.kind in constants.FAILURE_KINDS else "infra",
        summary=fit(record.summary, budget["summary"], max_chars=constants.MAX_SUMMARY),
        falsifying_example=None
        if example is None
        else fit(example, budget["falsifying_example"], max_chars=constants.MAX_EXAMPLE),
        detail_untrusted=fit(
            record.detail_untrusted, budget["detail_untrusted"], max_chars=constants.MAX_DETAIL, keep_end=True
        ),
    )


def bounded_case(record: CaseRecord) -> CaseRecord:
    """`record` with every text field within its JSON budget (`CASE_FIELD_JSON`)."""
    budget = CASE_FIELD_JSON

    def line(text: str | None, name: str) -> str | None:
        return None if text is None else fit(text, budget[name], max_chars=constants.MAX_LINE)

    return replace(
        record,
        files=[bounded_fetched(f) for f in record.files[: constants.MAX_FETCH_FILES]],
        name=fit(record.name, budget["name"], max_chars=constants.MAX_TEST_ID),
        outcome=record.outcome if record.outcome in constants.CASE_OUTCOMES else "infra",
        summary=fit(record.summary, budget["summary"], max_chars=constants.MAX_SUMMARY),
        expected_line=line(record.expected_line, "expected_line"),
        got_line_untrusted=line(record.got_line_untrusted, "got_line_untrusted"),
    )


def bounded_fetched(record: FetchedRecord) -> FetchedRecord:
    """`record` with its path and error within their budget (`FETCH_RECORD_JSON_BYTES`); its
    content is bounded with every file's (`bounded_result`)."""
    error = None if record.error is None else fit(record.error, FETCH_ERROR_JSON, max_chars=constants.MAX_SUMMARY)
    return replace(record, path=record.path[: constants.MAX_FETCH_PATH], error=error)


def bounded_result(result: JobResult, output_bytes: int | None = None) -> JobResult:
    """`result` within the result line's budget: at most MAX_FAILURES failures and MAX_CASES
    cases, each within its own budget, and the candidate's output in at most `output_bytes`
    bytes of JSON (its start kept; None: left as it is, for results that carry no job's). The
    outputs kept by compare = "none" share that budget: at most half of it (a kept output that
    would not fit, which `kept_output_bytes` rules out, is dropped), fetched files' contents at most
    a quarter (`fetched_json_bytes`; a file past it, which `fetch_bytes` rules out, loses its content
    and its record says so), the candidate output the rest."""
    output = result.candidate_output
    cases, kept = _kept_within(
        [bounded_case(c) for c in result.cases[: constants.MAX_CASES]],
        None if output_bytes is None else output_bytes // 2,
    )
    cases, fetched = _fetched_within(cases, None if output_bytes is None else fetched_json_bytes(output_bytes))
    kept += fetched
    return replace(
        result,
        failures=[bounded_failure(f) for f in result.failures[: constants.MAX_FAILURES]],
        failures_total=max(result.failures_total, len(result.failures)),
        cases=cases,
        candidate_output=clean(output) if output_bytes is None else fit(output, output_bytes - kept),
        sandbox_error=None if result.sandbox_error is None else fit(result.sandbox_error, ERROR_JSON_BYTES),
    )


def _kept_within(cases: list[CaseRecord], budget: int | None) -> tuple[list[CaseRecord], int]:
    """`cases` with their kept outputs (base64) within `budget` JSON bytes in all (None: no
    budget), and the bytes they take."""
    used = 0

    def within(value: str | None) -> str | None:
        nonlocal used
        if value is None or not isinstance(value, str) or not value.isascii():
            return None
        if budget is not None and used + len(value) + 2 > budget:
            return None
        used += len(value) + 2
        return value

    kept = [replace(c, stdout_b64=within(c.stdout_b64), stderr_b64=within(c.stderr_b64)) for c in cases]
    return kept, used


def _fetched_within(cases: list[CaseRecord], budget: int | None) -> tuple[list[CaseRecord], int]:
    """`cases` with their fetched files' contents (base64) within `budget` JSON bytes in all (None:
    no budget), and the bytes they take. A content that does not fit is dropped, never cut, and
    its record says why."""
    used = 0

    def within(record: FetchedRecord) -> FetchedRecord:
        nonlocal used
        value = record.b64
        if value is None:
            return record
        if not isinstance(value, str) or not value.isascii():
            return replace(record, b64=None, error="not sent: its content was not base64")
        if budget is not None and used + len(value) + 2 > budget:
            return replace(record, b64=None, error=f"not sent: over the result's {budget}-byte room for files")
        used += len(value) + 2
        return record

    records = 0  # at most MAX_FETCH_FILES records in all (the runner sends them on one case)

    def first(files: list[FetchedRecord]) -> list[FetchedRecord]:
        nonlocal records
        kept = files[: max(0, constants.MAX_FETCH_FILES - records)]
        records += len(kept)
        return [within(f) for f in kept]

    out = [replace(c, files=first(c.files)) if c.files else c for c in cases]
    return out, used
