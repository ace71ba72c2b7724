"""Program cases, and how a program's output is judged against a case (standard library only).

One home for both, imported by the host (to validate a suite when it loads), by the trusted
side in the sandbox (to judge each case) and by the plain judge of the bench (so that both
judges compare the same way). Nothing here runs candidate code: outputs arrive as bytes.

Cases come from a suite as either

- a folder (default ``cases/``) of ``NAME.in`` + ``NAME.out`` pairs, run in natural order of NAME
  (``2`` before ``10``), or
- a ``.jsonl`` file, one case per line: ``{"input": str, "output": str, "name": str (optional)}``.

Comparison modes (suite.toml ``[program] compare``):

- ``exact``: the same bytes, except that ``\\r\\n`` counts as ``\\n`` and one missing or extra
  newline at the very end is forgiven;
- ``tokens``: the same whitespace-separated tokens (line breaks and runs of spaces do not matter);
- ``float``: as tokens, except that where the expected token is a finite decimal number the
  output's token must be one too, within ``abs_tol`` or ``rel_tol`` (either suffices);
- ``checker``: a trusted function ``check(input, output, expected)`` from a suite file (a
  "special judge") decides, on plain strings; it returns a bool or ``(bool, message)``.

A wrong answer names its first difference: the line in the expected output (a trusted number
and the suite's own text) and the line in the program's output (the candidate's text).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .protocol import MAX_CASES, MAX_LINE

#: A case name: what a file name may hold, shown in evidence as a trusted line.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_NUMBER = re.compile(rb"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_DIGITS = re.compile(r"(\d+)")
END_OF_EXPECTED = "(end of the expected output)"
#: The function a checker file must define.
CHECKER_FUNCTION = "check"

Checker = Callable[[str, str, str], Any]


class CaseError(ValueError):
    """A suite's cases or checker cannot be used (the suite author's to fix)."""


@dataclass(frozen=True)
class Case:
    name: str
    input: bytes
    output: bytes


@dataclass(frozen=True)
class Judgement:
    """The verdict on one output. `summary` and `expected_line` are trusted; `got_line` (None when
    the output ended before the difference) and `detail` are the candidate's text (or a checker
    message that may quote it)."""

    ok: bool
    summary: str
    line: int | None = None
    output_line: int | None = None
    expected_line: str | None = None
    got_line: str | None = None
    detail: str = ""


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in _DIGITS.split(name)]


def _checked(cases: list[Case], where: str) -> list[Case]:
    if not cases:
        raise CaseError(f"{where} holds no case")
    if len(cases) > MAX_CASES:
        raise CaseError(f"{where} holds {len(cases)} cases, more than {MAX_CASES}")
    seen: set[str] = set()
    for case in cases:
        if not _NAME.match(case.name):
            raise CaseError(f"case name {case.name[:40]!r} in {where}: use letters, digits, '.', '_', '-'")
        if case.name in seen:
            raise CaseError(f"case name {case.name!r} appears twice in {where}")
        seen.add(case.name)
    return cases


def _from_jsonl(data: bytes, where: str) -> list[Case]:
    cases: list[Case] = []
    for number, line in enumerate(data.decode("utf-8", "strict").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError:
            raise CaseError(f"{where}:{number}: not JSON") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("input"), str) or not isinstance(raw.get("output"), str):
            raise CaseError(f"{where}:{number}: a case is an object with string fields input and output")
        unknown = sorted(set(raw) - {"name", "input", "output"})
        if unknown:
            raise CaseError(f"{where}:{number}: unknown key {unknown[0]!r}; allowed: name, input, output")
        name = raw.get("name", str(len(cases) + 1))
        if not isinstance(name, str):
            raise CaseError(f"{where}:{number}: name must be a string")
        cases.append(Case(name, raw["input"].encode(), raw["output"].encode()))
    return cases


def _from_folder(files: Mapping[str, bytes], folder: str) -> list[Case]:
    prefix = folder.rstrip("/") + "/"
    inputs, outputs = {}, {}
    for path, data in files.items():
        if not path.startswith(prefix) or "/" in path[len(prefix) :]:
            continue
        stem, dot, ext = path[len(prefix) :].rpartition(".")
        if dot and ext == "in":
            inputs[stem] = data
        elif dot and ext == "out":
            outputs[stem] = data
    for name in sorted(set(inputs) ^ set(outputs)):
        has, lacks = ("in", "out") if name in inputs else ("out", "in")
        raise CaseError(f"case {prefix}{name}.{has} has no {prefix}{name}.{lacks}")
    return [Case(name, inputs[name], outputs[name]) for name in sorted(inputs, key=_natural)]


def load_cases(files: Mapping[str, bytes], where: str) -> list[Case]:
    """The cases at `where` (a folder or a .jsonl file) among a suite's `files` (relative
    POSIX paths). Raises CaseError naming what is wrong."""
    if where.endswith(".jsonl"):
        if where not in files:
            raise CaseError(f"the cases file {where} is not in the suite")
        try:
            return _checked(_from_jsonl(files[where], where), where)
        except UnicodeDecodeError:
            raise CaseError(f"{where} is not UTF-8") from None
    return _checked(_from_folder(files, where), f"the cases folder {where}/")


def check_checker_source(source: bytes, filename: str) -> None:
    """Without running it: the checker file parses and defines `check` at its top level."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError) as exc:
        raise CaseError(f"the checker {filename} does not parse: {exc}") from None
    if not any(
        isinstance(node, ast.FunctionDef) and node.name == CHECKER_FUNCTION and len(node.args.args) == 3
        for node in tree.body
    ):
        raise CaseError(f"the checker {filename} must define {CHECKER_FUNCTION}(input, output, expected)")


def checker_from_source(source: bytes, filename: str) -> Checker:
    """The `check` function a suite's checker file defines (runs the file: trusted code)."""
    namespace: dict[str, Any] = {"__name__": "verifier_checker", "__file__": filename}
    exec(compile(source, filename, "exec"), namespace)
    check = namespace.get(CHECKER_FUNCTION)
    if not callable(check):
        raise CaseError(f"{filename} does not define {CHECKER_FUNCTION}(input, output, expected)")
    return check  # type: ignore[no-any-return]


# -- comparison -----------------------------------------------------------------------------
def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace")[:MAX_LINE]


def _lines(data: bytes) -> list[bytes]:
    data = data.replace(b"\r\n", b"\n")
    return (data[:-1] if data.endswith(b"\n") else data).split(b"\n") if data else []


def _wrong(line: int, output_line: int, expected: bytes | None, got: bytes | None) -> Judgement:
    """A first difference; None for a side that has already ended."""
    if got is None:
        summary = f"wrong answer: the output ends before line {line} of the expected output"
    elif expected is None:
        summary = "wrong answer: the output goes on past the end of the expected output"
    else:
        summary = f"wrong answer: line {line} of the expected output differs"
    return Judgement(
        ok=False,
        summary=summary,
        line=line,
        output_line=output_line,
        expected_line=END_OF_EXPECTED if expected is None else _text(expected),
        got_line=None if got is None else _text(got),
    )


def _compare_exact(expected: bytes, output: bytes) -> Judgement:
    want, got = _lines(expected), _lines(output)
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            return _wrong(i + 1, i + 1, w, g)
    return Judgement(True, "the output is the expected output")


def _tokens(data: bytes) -> list[tuple[bytes, int, bytes]]:
    """(token, line number, whole line) for every whitespace-separated token."""
    out = []
    for number, line in enumerate(data.replace(b"\r\n", b"\n").split(b"\n"), start=1):
        for token in line.split():
            out.append((token, number, line))
    return out


def _close(want: bytes, got: bytes, abs_tol: float, rel_tol: float) -> bool:
    if not _NUMBER.match(want):
        return want == got
    if not _NUMBER.match(got):
        return False
    a, b = float(got), float(want)
    if not (math.isfinite(a) and math.isfinite(b)):
        return want == got
    return abs(a - b) <= abs_tol or abs(a - b) <= rel_tol * abs(b)


def _compare_tokens(expected: bytes, output: bytes, tolerance: tuple[float, float] | None) -> Judgement:
    want, got = _tokens(expected), _tokens(output)
    last_want = want[-1][1] + 1 if want else 1
    last_got = got[-1][1] + 1 if got else 1
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w is not None and g is not None:
            same = w[0] == g[0] if tolerance is None else _close(w[0], g[0], *tolerance)
            if same:
                continue
        return _wrong(
            w[1] if w is not None else last_want,
            g[1] if g is not None else last_got,
            w[2] if w is not None else None,
            g[2] if g is not None else None,
        )
    kind = "numbers within tolerance" if tolerance is not None else "tokens"
    return Judgement(True, f"the output has the expected {kind}")


def compare(mode: str, expected: bytes, output: bytes, *, abs_tol: float = 1e-6, rel_tol: float = 1e-6) -> Judgement:
    """Judge `output` against `expected` in `mode` (exact, tokens or float)."""
    if mode == "exact":
        return _compare_exact(expected, output)
    if mode == "tokens":
        return _compare_tokens(expected, output, None)
    if mode == "float":
        return _compare_tokens(expected, output, (abs_tol, rel_tol))
    raise ValueError(f"unknown comparison mode {mode!r}")


def run_checker(check: Checker, case: Case, output: bytes) -> Judgement:
    """Judge `output` with a suite's checker, on plain strings (the output decoded as UTF-8,
    undecodable bytes replaced). Anything but True (or (True, message)) rejects it; a checker
    that raises rejects it too, naming the exception's type."""
    try:
        answer = check(
            case.input.decode("utf-8", "replace"),
            output.decode("utf-8", "replace"),
            case.output.decode("utf-8", "replace"),
        )
    except Exception as exc:  # noqa: BLE001 - a checker that chokes on the output rejects it
        return Judgement(False, f"wrong answer: the checker raised {type(exc).__name__}", detail=str(exc)[:2000])
    message = ""
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], str):
        answer, message = answer
    if answer is True:
        return Judgement(True, "the checker accepted the output", detail=message[:2000])
    if answer is False:
        return Judgement(False, "wrong answer: the checker rejected the output", detail=message[:2000])
    return Judgement(
        False, f"wrong answer: the checker returned {type(answer).__name__}, not a bool", detail=message[:2000]
    )
