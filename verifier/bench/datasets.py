"""The problem formats `verifier bench humaneval` reads, each made into the suite the sandbox runs.

- **HumanEval** (`task_id`, `prompt`, `test` defining `check(candidate)`, `entry_point`): the
  problem's own `check`, as the reference runs it.
- **EvalPlus** (`task_id`, `prompt`, `entry_point`, `canonical_solution`, `base_input`,
  `plus_input`, `atol`; HumanEval+ and MBPP+ ship in it): a differential test per input, the
  candidate's answer against the canonical solution's on the same arguments, compared as
  EvalPlus compares (equal, or for floats within `atol` and a relative 1e-7, same type and
  length); `find_zero` (HumanEval/32) is judged by its root, as EvalPlus does. Every
  `base_input`, then every `plus_input` unless `base_only`.
- **MBPP** (`task_id`, `code`, `test_list` of assert lines, optional `test_setup_code`): each
  assert a test, calling the functions the reference `code` defines.

A file may mix formats: each line's keys say which it is (`base_input`: EvalPlus; `test_list`:
MBPP; `test`: HumanEval). Files are JSONL (`.gz` too) or one JSON array (sanitized MBPP).
Problems are dataset text, trusted: their prompts, canonical solutions and asserts run on the
trusted side of the sandbox, never on the host. Stdlib and the suite model only (no extra).

Not carried over from EvalPlus: MBPP+'s per-task input conversions (lists made tuples, sets or
complex numbers before the call) and its special oracles; MBPP+ tasks that need them are judged
on the JSON values as they are.
"""

from __future__ import annotations

import ast
import gzip
import json
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from verifier.suite import Manifest, Suite

Format = Literal["humaneval", "evalplus", "mbpp"]

HUMANEVAL_TEST = '''"""HumanEval {task_id}: the problem's own check(), run on the trusted side."""
# The prompt is dataset text (trusted): it may define helpers the check uses (e.g. poly()).
exec(compile({prompt!r}, "<prompt>", "exec"), globals())

{test}

from solution import {entry_point} as candidate  # noqa: E402  (the candidate, across the boundary)

{entry_point} = candidate  # some checks call the function by name, as in the reference's shared namespace


def test_check():
    check(candidate)
'''

#: The differential check of EvalPlus problems and of `--plus` inputs (`verifier.bench.plus`):
#: the candidate's answer against the canonical solution's on the same arguments, equal, or for
#: floats within `atol` and a relative 1e-7 with the same type and length (an `atol` of 0 on
#: float answers means 1e-6), as EvalPlus compares; `find_zero` judged by its root.
DIFFERENTIAL = """import copy

_canonical = {{}}
exec(compile({program!r}, "<canonical>", "exec"), _canonical)  # dataset text (trusted)
ATOL = {atol!r}
ROOT_ORACLE = {root_oracle!r}  # find_zero: any root of poly() within ATOL is right

from solution import {entry_point} as candidate  # noqa: E402  (the candidate, across the boundary)


def _floats(value):
    if isinstance(value, float):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, float) for v in value)


def _near(got, expected, atol):
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(got, (list, tuple))
            and len(got) == len(expected)
            and all(_near(g, e, atol) for g, e in zip(got, expected))
        )
    try:
        return bool(got == expected or abs(got - expected) <= atol + 1e-7 * abs(expected))
    except TypeError:
        return False


def _same(got, expected):
    if got == expected:
        return True
    atol = ATOL if ATOL or not _floats(expected) else 1e-6
    return bool(atol) and type(got) is type(expected) and _near(got, expected, atol)


def _check(args, answer=None, known=...):
    # answer: the candidate's answer for args, when the test already asked for it (calls.each);
    # known: a canonical answer the host made when it made the input (plus_expected.txt)
    if ROOT_ORACLE:
        got = candidate(*copy.deepcopy(args)) if answer is None else answer()
        assert abs(_canonical["poly"](*args, got)) <= ATOL, "not a root within atol"
        return
    if known is not ...:
        got = candidate(*copy.deepcopy(args)) if answer is None else answer()
        if _same(got, known):
            return
        # Not the host's answer: the canonical solution answers here too (an answer ordered by
        # string hashes follows this process's seed, which is not the host's), and decides.
        expected = _canonical[{entry_point!r}](*copy.deepcopy(args))
    else:
        expected = _canonical[{entry_point!r}](*copy.deepcopy(args))
        got = candidate(*copy.deepcopy(args)) if answer is None else answer()
    assert _same(got, expected), "the answer differs from the canonical solution's"
"""

EVALPLUS_TEST = (
    '''"""EvalPlus {task_id}: the candidate against the canonical solution, one test per input."""
import json
import os

with open(os.path.join(os.path.dirname(__file__), "inputs.json")) as _fh:
    INPUTS = json.load(_fh)

'''
    + DIFFERENTIAL
    + """

def _test(args):
    def test():
        _check(args)

    return test


for _group, _inputs in INPUTS.items():
    for _i, _args in enumerate(_inputs):
        globals()[f"test_{{_group}}_{{_i}}"] = _test(_args)
"""
)

MBPP_TEST = '''"""MBPP task {task_id}: the dataset's asserts, one test each."""
import math  # noqa: F401  (MBPP's asserts use math.isclose without importing it)

{setup}

{imports}

{tests}
'''


@dataclass(frozen=True)
class Problem:
    """One problem: its suite, what a completion is appended to, its canonical solution as a
    whole program (None when the format has none), and the input each test calls with
    (EvalPlus: test name -> arguments), for a failure's details."""

    task_id: str
    format: Format
    prompt: str
    canonical: str | None
    suite: Suite
    line: dict[str, Any]
    inputs: Mapping[str, Any] = field(default_factory=dict)

    def source(self, completion: str) -> str:
        """What runs for a completion: the prompt, then the completion (as the reference does)."""
        return self.prompt + completion

    def with_call_limit(self, call_timeout_s: float, run_slack_s: float) -> Problem:
        """This problem with its own per-call limit (and the whole run's), carried by its suite."""
        limits = {"call_timeout_s": call_timeout_s, "timeout_s": call_timeout_s + run_slack_s}
        manifest = self.suite.manifest.model_copy(update={"limits": limits})
        return replace(self, suite=Suite(files=self.suite.files, manifest=manifest, name=self.suite.name))


def _text(raw: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key}: {'missing' if value is None else 'must be a string'}")
    return value


def humaneval_problem(raw: dict[str, Any], where: str) -> Problem:
    task_id, prompt = _text(raw, "task_id", where), _text(raw, "prompt", where)
    test, entry = _text(raw, "test", where), _text(raw, "entry_point", where)
    text = HUMANEVAL_TEST.format(task_id=task_id, prompt=prompt, test=test, entry_point=entry)
    # One plain test function: the direct runner runs it without pytest's start-up cost, in the
    # trusted server itself (HumanEval's checks change no global state; pristine.py checks that).
    suite = Suite(
        files={"test_humaneval.py": text.encode()},
        manifest=Manifest(runner="direct", trusted_process="shared"),
        name=f"humaneval-{task_id}",
    )
    canonical = raw.get("canonical_solution")
    return Problem(task_id, "humaneval", prompt, prompt + canonical if isinstance(canonical, str) else None, suite, raw)


def _inputs(raw: Mapping[str, Any], key: str, where: str) -> list[list[Any]]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(args, list) for args in value):
        raise ValueError(f"{where}: {key}: must be a list of argument lists")
    return value


def evalplus_problem(raw: dict[str, Any], where: str, *, base_only: bool = False) -> Problem:
    task_id, prompt = _text(raw, "task_id", where), _text(raw, "prompt", where)
    entry, canonical = _text(raw, "entry_point", where), _text(raw, "canonical_solution", where)
    atol = raw.get("atol", 0)
    if isinstance(atol, bool) or not isinstance(atol, int | float) or atol < 0:
        raise ValueError(f"{where}: atol: must be a number >= 0")
    groups = {"base": _inputs(raw, "base_input", where)}
    if not base_only:
        groups["plus"] = _inputs(raw, "plus_input", where)
    if not any(groups.values()):
        raise ValueError(f"{where}: base_input: no inputs to test with")
    program = prompt + canonical
    root = entry == "find_zero" and "def poly(" in program
    text = EVALPLUS_TEST.format(task_id=task_id, program=program, atol=atol, root_oracle=root, entry_point=entry)
    suite = Suite(
        files={"test_evalplus.py": text.encode(), "inputs.json": json.dumps(groups).encode()},
        # One candidate process answers every input, as in EvalPlus; the canonical solution is
        # dataset code, so the tests get a fresh trusted process per job.
        manifest=Manifest(runner="direct", candidate_process="per-run"),
        name=f"evalplus-{task_id}",
    )
    inputs = {f"test_{group}_{i}": args for group, values in groups.items() for i, args in enumerate(values)}
    return Problem(task_id, "evalplus", prompt, program, suite, raw, inputs)


def _defined(code: str, where: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(f"{where}: code: not valid Python ({exc.msg}, line {exc.lineno})") from None
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def mbpp_problem(raw: dict[str, Any], where: str) -> Problem:
    task = raw.get("task_id")
    if isinstance(task, bool) or not isinstance(task, int | str):
        raise ValueError(f"{where}: task_id: must be a number or a string")
    code, setup = _text(raw, "code", where), _text(raw, "test_setup_code", where, "")
    asserts = raw.get("test_list")
    if not isinstance(asserts, list) or not asserts or not all(isinstance(a, str) for a in asserts):
        raise ValueError(f"{where}: test_list: must be a non-empty list of assert lines")
    try:
        called = {n.id for a in asserts for n in ast.walk(ast.parse(a)) if isinstance(n, ast.Name)}
    except SyntaxError:
        raise ValueError(f"{where}: test_list: an assert is not valid Python") from None
    names = sorted(_defined(code, where) & called)
    if not names:
        raise ValueError(f"{where}: test_list: the asserts call no function that code defines")
    tests = "\n\n".join(
        f"def test_{i}():\n{textwrap.indent(textwrap.dedent(line).strip(), '    ')}\n" for i, line in enumerate(asserts)
    )
    imports = "\n".join(f"from solution import {n} as {n}  # noqa: E402" for n in names)
    text = MBPP_TEST.format(task_id=task, setup=setup, imports=imports, tests=tests)
    suite = Suite(
        files={"test_mbpp.py": text.encode()},
        manifest=Manifest(runner="direct", candidate_process="per-run"),
        name=f"mbpp-{task}",
    )
    return Problem(str(task), "mbpp", "", code, suite, raw)


def problem_of(raw: dict[str, Any], where: str, *, base_only: bool = False) -> Problem:
    """The problem of one line, in the format its keys name."""
    if "base_input" in raw:
        return evalplus_problem(raw, where, base_only=base_only)
    if "test_list" in raw:
        return mbpp_problem(raw, where)
    if "test" in raw:
        return humaneval_problem(raw, where)
    raise ValueError(
        f"{where}: not a problem: needs test and entry_point (HumanEval), base_input (EvalPlus) or test_list (MBPP)"
    )


def read_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of a JSONL file (gzipped when it ends in .gz), or of a JSON array
    (numbered by position). Raises ValueError naming the line that is not JSON."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        text = fh.read()
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{path}: not a JSON array ({exc})") from None
        yield from enumerate(items, start=1)
        return
    yield from _jsonl(path, text.splitlines())


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line of a JSONL file. Raises ValueError naming a
    line that is not JSON (a torn last line included)."""
    with open(path, encoding="utf-8") as fh:
        yield from _jsonl(path, fh)


def _jsonl(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError:
                raise ValueError(f"{path}:{number}: not JSON") from None


def load_problems(path: Path, *, base_only: bool = False) -> dict[str, Problem]:
    """Every problem of a problems file by task id (as a string). Raises ValueError naming the
    line and the key at fault."""
    problems: dict[str, Problem] = {}
    for number, raw in read_lines(path):
        where = f"{path}:{number}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: a problem must be a JSON object")
        problem = problem_of(raw, where, base_only=base_only)
        if problem.task_id in problems:
            raise ValueError(f"{where}: task_id {problem.task_id!r} appears twice")
        problems[problem.task_id] = problem
    if not problems:
        raise ValueError(f"{path}: no problems")
    return problems
