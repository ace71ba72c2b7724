"""The one comparison of program outputs (verifier.runner.cases): modes, first differences,
case files and special judges. Pure: no sandbox."""

from __future__ import annotations

import json

import pytest

from verifier.runner.cases import (
    END_OF_EXPECTED,
    Case,
    CaseError,
    check_checker_source,
    checker_from_source,
    compare,
    load_cases,
    run_checker,
)
from verifier.runner.protocol import MAX_CASES, MAX_LINE


@pytest.mark.parametrize(
    ("expected", "output", "ok"),
    [
        (b"3\n", b"3\n", True),
        (b"3\n", b"3", True),  # a missing final newline is forgiven
        (b"3", b"3\n", True),
        (b"1\n2\n", b"1\r\n2\r\n", True),  # CRLF counts as LF
        (b"3\n", b"3\n\n", False),  # only one newline at the end is forgiven
        (b"a b\n", b"a  b\n", False),  # spaces matter
        (b"a b\n", b"a b \n", False),
        (b"", b"", True),
        (b"", b"x", False),
    ],
)
def test_exact(expected: bytes, output: bytes, ok: bool) -> None:
    assert compare("exact", expected, output).ok is ok


@pytest.mark.parametrize(
    ("expected", "output", "ok"),
    [
        (b"1 2\n3\n", b"1\n2 3", True),  # only the tokens matter
        (b"1 2 3\n", b"  1\t2   3  \n\n\n", True),
        (b"1 2 3\n", b"1 2\n", False),
        (b"1 2\n", b"1 2 3\n", False),
        (b"1.0\n", b"1\n", False),  # tokens are text
        (b"YES\n", b"yes\n", False),
    ],
)
def test_tokens(expected: bytes, output: bytes, ok: bool) -> None:
    assert compare("tokens", expected, output).ok is ok


@pytest.mark.parametrize(
    ("expected", "output", "ok"),
    [
        (b"3.141593\n", b"3.14159265\n", True),
        (b"3.141593\n", b"3.14\n", False),
        (b"1000000.0\n", b"1000000.5\n", True),  # relative 5e-7
        (b"1000000.0\n", b"1000002\n", False),
        (b"0.0000001\n", b"0\n", True),  # absolute 1e-7
        (b"1 abc 2.5\n", b"1.0000001 abc 2.5\n", True),  # non-numbers compare as text
        (b"1 abc\n", b"1 abd\n", False),
        (b"2.5\n", b"nan\n", False),
        (b"2.5\n", b"inf\n", False),
        (b"2.5\n", b"2.5e0\n", True),
        (b"2.5\n", b"0x2\n", False),
        (b"1e400\n", b"1e400\n", True),  # not finite: compared as text
    ],
)
def test_float(expected: bytes, output: bytes, ok: bool) -> None:
    assert compare("float", expected, output).ok is ok


def test_float_tolerances_are_the_suites() -> None:
    assert compare("float", b"1.0", b"1.01", abs_tol=0.02, rel_tol=0).ok
    assert not compare("float", b"1.0", b"1.01", abs_tol=0.001, rel_tol=0.001).ok
    assert compare("float", b"100", b"101", abs_tol=0, rel_tol=0.011).ok


def test_the_first_difference_names_trusted_line_numbers_and_both_lines() -> None:
    j = compare("exact", b"a\nb\nc\n", b"a\nB\nc\n")
    assert (j.ok, j.line, j.output_line, j.expected_line, j.got_line) == (False, 2, 2, "b", "B")
    assert j.summary == "wrong answer: line 2 of the expected output differs"
    j = compare("tokens", b"1 2\n3 4\n", b"1\n2\n3\n5\n")
    assert (j.line, j.output_line, j.expected_line, j.got_line) == (2, 4, "3 4", "5")


def test_an_output_that_ends_early_or_goes_on() -> None:
    j = compare("exact", b"1\n2\n", b"1\n")
    assert (j.line, j.got_line, j.expected_line) == (2, None, "2")
    assert "ends before line 2" in j.summary
    j = compare("tokens", b"1\n", b"1\n2\n")
    assert (j.line, j.output_line, j.expected_line, j.got_line) == (2, 2, END_OF_EXPECTED, "2")
    assert "goes on past the end" in j.summary
    assert not compare("tokens", b"1\n", b"").ok


def test_lines_are_bounded_and_any_bytes_are_text() -> None:
    j = compare("exact", b"x\n", b"\xff\xfe" + b"y" * 10_000 + b"\n")
    assert j.got_line is not None and len(j.got_line) == MAX_LINE and j.got_line.startswith("\ufffd")


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown comparison mode"):
        compare("fuzzy", b"", b"")


# -- cases -------------------------------------------------------------------------------------
def test_folder_cases_in_natural_order() -> None:
    files = {f"cases/{n}.{ext}": f"{n}{ext}".encode() for n in ("10", "2", "1", "a") for ext in ("in", "out")}
    files["cases/nested/3.in"] = b"ignored: not directly in the folder"
    files["other/4.in"] = b"ignored"
    cases = load_cases(files, "cases")
    assert [c.name for c in cases] == ["1", "2", "10", "a"]
    assert cases[0] == Case("1", b"1in", b"1out")


def test_folder_cases_must_pair_up() -> None:
    with pytest.raises(CaseError, match=r"cases/2\.in has no cases/2\.out"):
        load_cases({"cases/1.in": b"", "cases/1.out": b"", "cases/2.in": b""}, "cases")
    with pytest.raises(CaseError, match="holds no case"):
        load_cases({"suite.toml": b""}, "cases")


def test_jsonl_cases() -> None:
    data = b'{"input": "1\\n", "output": "2\\n"}\n\n{"name": "big", "input": "", "output": ""}\n'
    cases = load_cases({"t.jsonl": data}, "t.jsonl")
    assert [(c.name, c.input, c.output) for c in cases] == [("1", b"1\n", b"2\n"), ("big", b"", b"")]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"nope", "not JSON"),
        (b'{"input": 1, "output": ""}', "string fields input and output"),
        (b'{"input": "", "output": "", "expected": ""}', "unknown key 'expected'"),
        (b'{"input": "", "output": "", "name": 3}', "name must be a string"),
        (b'{"input": "", "output": "", "name": "../x"}', "use letters, digits"),
    ],
)
def test_jsonl_cases_are_checked(line: bytes, error: str) -> None:
    with pytest.raises(CaseError, match=error):
        load_cases({"t.jsonl": line}, "t.jsonl")


def test_case_names_are_unique_and_cases_bounded() -> None:
    twice = json.dumps({"name": "a", "input": "", "output": ""}).encode() + b"\n"
    with pytest.raises(CaseError, match="appears twice"):
        load_cases({"t.jsonl": twice * 2}, "t.jsonl")
    many = b"".join(json.dumps({"input": "", "output": ""}).encode() + b"\n" for _ in range(MAX_CASES + 1))
    with pytest.raises(CaseError, match="more than"):
        load_cases({"t.jsonl": many}, "t.jsonl")
    with pytest.raises(CaseError, match="not in the suite"):
        load_cases({}, "t.jsonl")


# -- special judges ------------------------------------------------------------------------------
CASE = Case("1", b"4\n", b"2 2\n")


def test_a_checker_decides_on_plain_strings() -> None:
    seen: list[tuple[str, str, str]] = []

    def check(i: str, o: str, e: str) -> bool:
        seen.append((i, o, e))
        return sorted(map(int, o.split())) == [1, 3] or o.split() == e.split()

    assert run_checker(check, CASE, b"3 1\n").ok
    assert run_checker(check, CASE, b"2 2").ok
    assert not run_checker(check, CASE, b"\xff").ok
    assert seen[0] == ("4\n", "3 1\n", "2 2\n") and seen[2][1] == "\ufffd"


@pytest.mark.parametrize(
    ("answer", "ok", "summary"),
    [
        (True, True, "accepted"),
        ((True, "fine"), True, "accepted"),
        (False, False, "rejected"),
        ((False, "too big"), False, "rejected"),
        (1, False, "returned int, not a bool"),  # truthy is not enough
        ("yes", False, "returned str, not a bool"),
        ((1, "x"), False, "returned int, not a bool"),
    ],
)
def test_only_true_accepts(answer: object, ok: bool, summary: str) -> None:
    j = run_checker(lambda i, o, e: answer, CASE, b"")
    assert j.ok is ok and summary in j.summary


def test_a_checker_that_raises_rejects_and_names_only_the_type() -> None:
    def check(i: str, o: str, e: str) -> bool:
        return int(o) == 4

    j = run_checker(check, CASE, b"four")
    assert not j.ok and j.summary == "wrong answer: the checker raised ValueError"
    assert "four" in j.detail and "four" not in j.summary


def test_checker_files() -> None:
    check_checker_source(b"def check(input, output, expected):\n    return True\n", "c.py")
    for bad, why in (
        (b"def check(:\n", "does not parse"),
        (b"def check(a, b):\n    return True\n", "must define check"),
        (b"check = lambda a, b, c: True\n", "must define check"),
    ):
        with pytest.raises(CaseError, match=why):
            check_checker_source(bad, "c.py")
    check = checker_from_source(b"def check(i, o, e):\n    return o == e\n", "c.py")
    assert check("", "1", "1") is True
    with pytest.raises(CaseError, match="does not define"):
        checker_from_source(b"x = 1\n", "c.py")
