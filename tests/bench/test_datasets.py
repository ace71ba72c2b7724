"""The problem formats beside HumanEval's: EvalPlus's (`base_input`, `plus_input`, `atol`) and
MBPP's (`test_list`), read from small files in those formats (tests/bench/data/, written for
these tests from HumanEval's problems and MBPP's first tasks), and samples as `completion` or
EvalPlus's `solution` (a whole program)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from verifier.bench import datasets
from verifier.bench import humaneval as he

DATA = Path(__file__).parent / "data"
EVALPLUS = DATA / "evalplus_problems.jsonl"
MBPP = DATA / "mbpp_problems.json"
VERIFIER = [sys.executable, "-m", "verifier", "bench", "humaneval"]


def test_formats_are_told_by_their_keys() -> None:
    plus = datasets.load_problems(EVALPLUS)
    assert [p.format for p in plus.values()] == ["evalplus"] * 3
    add = plus["HumanEval/53"]
    assert add.inputs == {
        "test_base_0": [0, 1],
        "test_base_1": [1, 0],
        "test_base_2": [5, 7],
        "test_plus_0": [-3, 3],
        "test_plus_1": [10**20, 1],
    }
    groups = {"base": [[0, 1], [1, 0], [5, 7]], "plus": [[-3, 3], [10**20, 1]]}
    assert json.loads(add.suite.files["inputs.json"]) == groups
    assert add.suite.candidate_process == "per-run" and add.suite.runner == "direct"
    base = datasets.load_problems(EVALPLUS, base_only=True)["HumanEval/53"]
    assert set(base.inputs) == {"test_base_0", "test_base_1", "test_base_2"}
    mbpp = datasets.load_problems(MBPP)  # a JSON array, as sanitized MBPP ships
    assert list(mbpp) == ["2", "17", "82"] and {p.format for p in mbpp.values()} == {"mbpp"}
    text = mbpp["2"].suite.files["test_mbpp.py"].decode()
    assert "from solution import similar_elements as similar_elements" in text
    assert text.count("def test_") == 3 and mbpp["2"].prompt == ""
    for problem in [*plus.values(), *mbpp.values()]:
        for name, data in problem.suite.files.items():
            if name.endswith(".py"):
                compile(data, name, "exec")


def run_module(problem: datasets.Problem, candidate: Any, tmp_path: Path) -> dict[str, bool]:
    """The problem's test module run on the host, with `candidate` as the solution module's
    function: which tests pass. (Unit test of the comparison only; the sandbox runs it for real
    in test_cli_runs_evalplus_and_mbpp_problems.)"""
    for name, data in problem.suite.files.items():
        (tmp_path / name).write_bytes(data)
    (test_file,) = problem.suite.test_files
    module = types.ModuleType("solution")
    setattr(module, problem.line["entry_point"], candidate)
    sys.modules["solution"] = module
    try:
        namespace: dict[str, Any] = {"__file__": str(tmp_path / test_file), "__name__": "t"}
        exec(compile((tmp_path / test_file).read_bytes(), test_file, "exec"), namespace)
    finally:
        del sys.modules["solution"]
    outcome = {}
    for name, fn in namespace.items():
        if name.startswith("test_"):
            try:
                fn()
                outcome[name] = True
            except AssertionError:
                outcome[name] = False
    return outcome


def test_evalplus_compares_as_evalplus_does(tmp_path: Path) -> None:
    problems = datasets.load_problems(EVALPLUS)
    add, frac, root = problems["HumanEval/53"], problems["HumanEval/2"], problems["HumanEval/32"]
    assert all(run_module(add, lambda x, y: y + x, tmp_path).values())
    wrong = run_module(add, lambda x, y: x + y if x < 10**10 else 0, tmp_path)
    assert [n for n, ok in wrong.items() if not ok] == ["test_plus_1"]
    assert not any(run_module(add, lambda x, y: str(x + y), tmp_path).values())
    # floats: equal within 1e-6 (atol 0 on float answers means 1e-6 in EvalPlus), same type
    assert all(run_module(frac, lambda n: n - int(n) + 1e-9, tmp_path).values())
    coarse = run_module(frac, lambda n: round(n % 1.0, 2), tmp_path)
    assert [n for n, ok in coarse.items() if not ok] == ["test_base_2", "test_plus_0"]  # 0.456 and 0.0001
    # find_zero: any root within atol, not the canonical's root
    assert all(run_module(root, lambda xs: -0.5 if xs == [1, 2] else 1.0, tmp_path).values())
    assert not any(run_module(root, lambda xs: 0.25, tmp_path).values())


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "evalplus.jsonl:1: not JSON"),
        ('{"task_id": "a", "prompt": "", "entry_point": "f", "base_input": [[1]]}', ":1: canonical_solution: missing"),
        (
            '{"task_id": "a", "prompt": "", "entry_point": "f", "canonical_solution": "", "base_input": [1]}',
            ":1: base_input: must be a list of argument lists",
        ),
        (
            '{"task_id": "a", "prompt": "", "entry_point": "f", "canonical_solution": "", "base_input": [[1]], '
            '"atol": -1}',
            ":1: atol: must be a number >= 0",
        ),
        ('{"task_id": 3, "code": "def f(): pass", "test_list": ["assert g() == 1"]}', "call no function that code"),
        ('{"task_id": 3, "code": "def f(): pass", "test_list": []}', ":1: test_list: must be a non-empty list"),
        ('{"task_id": "x", "prompt": "p"}', ":1: not a problem: needs test and entry_point (HumanEval)"),
    ],
)
def test_a_bad_problem_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "evalplus.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        datasets.load_problems(path)


def test_samples_take_completion_or_solution(tmp_path: Path) -> None:
    problems = datasets.load_problems(EVALPLUS)
    path = tmp_path / "samples.jsonl"
    path.write_text(
        json.dumps({"task_id": "HumanEval/53", "completion": "    return x + y\n"})
        + "\n"
        + json.dumps({"task_id": "HumanEval/53", "solution": "def add(x, y):\n    return x + y\n"})
        + "\n"
    )
    first, second = he.read_samples(path, problems)
    assert (
        he.candidate_source(problems["HumanEval/53"], first) == problems["HumanEval/53"].prompt + "    return x + y\n"
    )
    assert he.candidate_source(problems["HumanEval/53"], second) == "def add(x, y):\n    return x + y\n"
    path.write_text(json.dumps({"task_id": "HumanEval/53", "solution": 3}) + "\n")
    with pytest.raises(ValueError, match=r"samples\.jsonl:1: a sample needs task_id and completion"):
        he.read_samples(path, problems)


VOLUME = "    return 4 / 3 * math.pi * r**3\n"
FIND_ZERO_NEWTON = """
    x = 0.0
    for _ in range(200):
        d = sum(i * c * x ** (i - 1) for i, c in enumerate(xs) if i)
        x = x + 1e-3 if d == 0 else x - poly(xs, x) / d
    return x
"""


@pytest.mark.docker
@pytest.mark.slow
def test_cli_runs_evalplus_and_mbpp_problems(sandbox_image: str, tmp_path: Path) -> None:
    """Both formats end to end in the sandbox, with --details naming the failing dataset input."""
    cases = [
        (EVALPLUS, {"task_id": "HumanEval/53", "completion": "    return x + y\n"}, True),
        (EVALPLUS, {"task_id": "HumanEval/53", "solution": "def add(x, y):\n    return y + x\n"}, True),
        (EVALPLUS, {"task_id": "HumanEval/53", "completion": "    return x + y if x < 10**10 else 0\n"}, False),
        (EVALPLUS, {"task_id": "HumanEval/2", "completion": "    return number - int(number) + 1e-9\n"}, True),
        (EVALPLUS, {"task_id": "HumanEval/32", "completion": FIND_ZERO_NEWTON}, True),
        (EVALPLUS, {"task_id": "HumanEval/32", "completion": "    return 0.25\n"}, False),
        (MBPP, {"task_id": 2, "completion": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"}, True),
        (MBPP, {"task_id": 17, "completion": "def square_perimeter(a):\n    return a * a\n"}, False),
        (MBPP, {"task_id": 82, "solution": f"import math\ndef volume_sphere(r):\n{VOLUME}"}, True),
    ]
    rows: list[dict[str, Any]] = []
    for problems in (EVALPLUS, MBPP):
        samples = tmp_path / f"{problems.stem}.jsonl"
        samples.write_text("".join(json.dumps(line) + "\n" for p, line, _ in cases if p == problems))
        done = subprocess.run(
            [*VERIFIER, str(samples), "--problems", str(problems), "--workers", "2", "--k", "1", "--details"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        rows += [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in rows] == [ok for _, _, ok in cases]
    plus_only = rows[2]["failures"]
    assert [(f["test"].rpartition("::")[2], f["input"]) for f in plus_only] == [("test_plus_1", [10**20, 1])]
    square = rows[7]["failures"]
    assert [f["test"].rpartition("::")[2] for f in square] == ["test_0", "test_1"]  # 4 * 4 == 4 + 4 + 4 + 4
    assert all(r["failures"] == [] for r in rows if r["passed"])
