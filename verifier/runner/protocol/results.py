"""The result line and the progress line (runner -> host): written, split and parsed, every field
checked for type, size and vocabulary before the host uses any of it."""

from __future__ import annotations

import base64
import json
from collections.abc import Collection
from typing import Any

from ..languages import NAMES as LANGUAGE_NAMES
from . import constants
from .budget import bounded_result
from .jobs import plain
from .records import CaseRecord, CompileRecord, FailureRecord, FetchedRecord, JobCounts, JobResult
from .strings import ProtocolError, clean, summary_line


def format_result_line(nonce: str, recycle: bool, result: JobResult, output_bytes: int | None = None) -> bytes:
    """The result line of a job; `result` is bounded first (`bounded_result`), so the line fits
    within the host's limit, `output_bytes + RESULT_OVERHEAD_BYTES`, whatever it carries."""
    payload = json.dumps(plain(bounded_result(result, output_bytes)), ensure_ascii=True, separators=(",", ":"))
    return constants.RESULT_PREFIX + f"{nonce} {int(recycle)} ".encode() + payload.encode() + b"\n"


def format_progress_line(nonce: str, done: int, total: int) -> bytes:
    return constants.PROGRESS_PREFIX + f"{nonce} {done} {total}\n".encode()


def parse_progress_line(line: bytes, nonce: str) -> tuple[int, int] | None:
    """(done, total) of this job's progress line; None for anything else (another job's nonce,
    a malformed or implausible line)."""
    if not line.startswith(constants.PROGRESS_PREFIX):
        return None
    parts = line[len(constants.PROGRESS_PREFIX) :].rstrip(b"\n").split(b" ")
    if len(parts) != 3 or parts[0] != nonce.encode() or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    if len(parts[1]) > 9 or len(parts[2]) > 9:
        return None
    done, total = int(parts[1]), int(parts[2])
    return (done, total) if done <= total else None


def split_result_line(line: bytes) -> tuple[str, bool, bytes] | None:
    """(nonce, recycle, payload) of a result line, or None when `line` is not one."""
    if not line.startswith(constants.RESULT_PREFIX):
        return None
    parts = line[len(constants.RESULT_PREFIX) :].split(b" ", 2)
    if len(parts) != 3 or parts[1] not in (b"0", b"1"):
        return None
    return parts[0].decode("ascii", "replace"), parts[1] == b"1", parts[2].rstrip(b"\n")


def _want(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise ProtocolError(f"result field {name}: unexpected {type(value).__name__}")
    return value


def _bounded_list(raw: dict[str, Any], name: str, limit: int) -> list[Any]:
    """Field `name` of `raw`: a list (empty when absent) of at most `limit` items."""
    items: list[Any] = _want(raw.get(name, []), list, name)
    if len(items) > limit:
        raise ProtocolError(f"result field {name}: too many")
    return items


def _one_of(raw: dict[str, Any], name: str, vocabulary: Collection[str], default: str | None = None) -> str:
    """Field `name` of `raw`: a word of `vocabulary` (`default` when absent)."""
    word: str = _want(raw.get(name, default), str, name)
    if word not in vocabulary:
        raise ProtocolError(f"result field {name}: unknown")
    return word


def _count(value: Any, name: str) -> int:
    number: int = _want(value, int, name)
    if number < 0:
        raise ProtocolError(f"result field {name}: negative")
    return number


def _number(value: Any, name: str) -> float:
    return float(_want(value, (int, float), name))


def _failure(raw: Any) -> FailureRecord:
    raw = _want(raw, dict, "failures[]")
    kind = _want(raw.get("kind"), str, "kind")
    if kind not in constants.FAILURE_KINDS:
        raise ProtocolError(f"result field kind: unknown {kind[:40]!r}")
    example = raw.get("falsifying_example")
    return FailureRecord(
        test_id=summary_line(_want(raw.get("test_id"), str, "test_id"))[: constants.MAX_TEST_ID],
        kind=kind,
        summary=summary_line(_want(raw.get("summary"), str, "summary")),
        falsifying_example=None
        if example is None
        else summary_line(_want(example, str, "example"))[: constants.MAX_EXAMPLE],
        detail_untrusted=clean(_want(raw.get("detail_untrusted", ""), str, "detail"), constants.MAX_DETAIL),
    )


def _optional_int(value: Any, name: str) -> int | None:
    return None if value is None else int(_want(value, int, name))


def _optional_line(value: Any, name: str, *, trusted: bool) -> str | None:
    if value is None:
        return None
    text = _want(value, str, name)
    return summary_line(text)[: constants.MAX_LINE] if trusted else clean(text, constants.MAX_LINE)


def _case(raw: Any) -> CaseRecord:
    raw = _want(raw, dict, "cases[]")
    outcome = _want(raw.get("outcome"), str, "outcome")
    if outcome not in constants.CASE_OUTCOMES:
        raise ProtocolError(f"result field outcome: unknown {outcome[:40]!r}")
    return CaseRecord(
        name=summary_line(_want(raw.get("name"), str, "name"))[: constants.MAX_TEST_ID],
        outcome=outcome,
        summary=summary_line(_want(raw.get("summary"), str, "summary")),
        ran=bool(_want(raw.get("ran", True), bool, "ran")),
        time_s=_number(raw.get("time_s", 0.0), "time_s"),
        wall_s=_number(raw.get("wall_s", 0.0), "wall_s"),
        cpu_s=_number(raw.get("cpu_s", 0.0), "cpu_s"),
        memory_bytes=_count(raw.get("memory_bytes", 0), "memory_bytes"),
        exit_code=_optional_int(raw.get("exit_code"), "exit_code"),
        signal=_optional_int(raw.get("signal"), "signal"),
        line=_optional_int(raw.get("line"), "line"),
        output_line=_optional_int(raw.get("output_line"), "output_line"),
        expected_line=_optional_line(raw.get("expected_line"), "expected_line", trusted=True),
        got_line_untrusted=_optional_line(raw.get("got_line_untrusted"), "got_line_untrusted", trusted=False),
        stdout_b64=_optional_b64(raw.get("stdout_b64"), "stdout_b64"),
        stderr_b64=_optional_b64(raw.get("stderr_b64"), "stderr_b64"),
        stderr_bytes=_count(raw.get("stderr_bytes", 0), "stderr_bytes"),
        files=[_fetched(f) for f in _bounded_list(raw, "files", constants.MAX_FETCH_FILES)],
    )


def _fetched(raw: Any) -> FetchedRecord:
    """A fetched file's record: its path (the suite's, as asked), its content (base64, checked:
    `size` must be its length) or a trusted error."""
    raw = _want(raw, dict, "files[]")
    path = _want(raw.get("path"), str, "path")
    if len(path) > constants.MAX_FETCH_PATH:
        raise ProtocolError("result field path: too long")
    b64 = _optional_b64(raw.get("b64"), "b64")
    size = _count(raw.get("size", 0), "size")
    error = raw.get("error")
    if (b64 is None) == (error is None):
        raise ProtocolError("result field files[]: exactly one of b64 and error")
    if b64 is not None and len(base64.b64decode(b64)) != size:
        raise ProtocolError("result field files[]: size is not its content's")
    return FetchedRecord(
        path=path, b64=b64, size=size, error=None if error is None else summary_line(_want(error, str, "error"))
    )


def _compile(raw: Any) -> CompileRecord | None:
    if raw is None:
        return None
    raw = _want(raw, dict, "compile")
    return CompileRecord(
        language=_one_of(raw, "language", LANGUAGE_NAMES),
        ok=bool(_want(raw.get("ok"), bool, "ok")),
        summary=summary_line(_want(raw.get("summary"), str, "summary")),
        time_s=_number(raw.get("time_s", 0.0), "time_s"),
        wall_s=_number(raw.get("wall_s", 0.0), "wall_s"),
        memory_bytes=_count(raw.get("memory_bytes", 0), "memory_bytes"),
        exit_code=_optional_int(raw.get("exit_code"), "exit_code"),
        signal=_optional_int(raw.get("signal"), "signal"),
        artifact_bytes=_count(raw.get("artifact_bytes", 0), "artifact_bytes"),
    )


def _optional_b64(value: Any, name: str) -> str | None:
    """A kept output: base64 text (checked here, decoded by the verdict), or None."""
    if value is None:
        return None
    text: str = _want(value, str, name)
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        raise ProtocolError(f"result field {name}: not base64") from None
    return text


def parse_result(payload: bytes, *, max_bytes: int) -> JobResult:
    """Check and build a JobResult from a result line's JSON. Raises ProtocolError."""
    if len(payload) > max_bytes:
        raise ProtocolError(f"result of {len(payload)} bytes, over the {max_bytes}-byte limit")
    try:
        raw = _want(json.loads(payload), dict, "result")
    except ValueError as exc:
        raise ProtocolError(f"result is not JSON ({exc.__class__.__name__})") from None
    counts = _want(raw.get("counts"), dict, "counts")
    error = raw.get("sandbox_error")
    failures = _bounded_list(raw, "failures", constants.MAX_FAILURES)
    runner = _one_of(raw, "runner", constants.RUNNERS)
    kind = _one_of(raw, "kind", constants.KINDS, default="tests")
    cases = _bounded_list(raw, "cases", constants.MAX_CASES)
    kernel = _one_of(raw, "kernel", constants.KERNELS)
    return JobResult(
        runner=runner,
        exit_code=_want(raw.get("exit_code"), int, "exit_code"),
        counts=JobCounts(
            **{k: _count(counts.get(k, 0), k) for k in ("expected", "passed", "failed", "errors", "skipped")}
        ),
        failures=[_failure(f) for f in failures],
        failures_total=_count(raw.get("failures_total", len(failures)), "failures_total"),
        import_failed=bool(_want(raw.get("import_failed", False), bool, "import_failed")),
        calls=_count(raw.get("calls", 0), "calls"),
        candidate_output=clean(_want(raw.get("candidate_output", ""), str, "candidate_output")),
        candidate_output_bytes=_count(raw.get("candidate_output_bytes", 0), "candidate_output_bytes"),
        tests_s=_number(raw.get("tests_s", 0.0), "tests_s"),
        host_wait_s=_number(raw.get("host_wait_s", 0.0), "host_wait_s"),
        sandbox_error=None if error is None else summary_line(_want(error, str, "sandbox_error")),
        oom=bool(_want(raw.get("oom", False), bool, "oom")),
        kind=kind,
        cases=[_case(c) for c in cases],
        kernel=kernel,
        compile=_compile(raw.get("compile")),
    )
