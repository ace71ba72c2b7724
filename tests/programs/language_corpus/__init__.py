"""A correctness corpus for programs in every language (issue 36): stdin/stdout problems, one
module each, and per problem and language a correct solution and wrong ones (a wrong answer, a
time limit, a runtime error, a compile error), each with the status it must get. Used by the
sandbox's tests (`test_languages_docker.py`, `tests/ray/test_languages_on_ray.py`) and by the plain
judge (`bench/languages_plain.py`), which must agree.

Every problem has, in every language of `LANGUAGES`, a correct solution and at least two wrong
ones. `sum` has every kind of wrong solution in every language; the other problems take two of
a wrong answer, a runtime error and a compile error, in turn by language, so that each language
meets each kind on several problems. Wrong answers are written per problem (a real bug: an
off-by-one, a 32-bit overflow, a lost tie-break, a trailing space under exact comparison);
runtime and compile errors are the correct solution with a fault added (`runtime_error`,
`compile_error`).

An interpreted language has no compile step: its "compile error" (a syntax error) is the runtime
error its interpreter exits with, as judges report it (status `error`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

#: Every language the corpus covers: each problem has solutions in each.
LANGUAGES = ("python", "c", "cpp", "java", "nodejs", "go", "rust", "bash")
INTERPRETED = frozenset({"python", "nodejs", "bash"})
#: Per case; the plain judge uses the same.
TIME_LIMIT_S = 2.0
MEMORY_BYTES = 256 * 1024**2
COMPILE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Solution:
    problem: str
    language: str
    #: What it is: ok, ok_public_class, wrong_answer, timeout, runtime_error, compile_error.
    note: str
    expect: str
    source: str


def expected_status(language: str, note: str) -> str:
    if note.startswith("ok"):
        return "passed"
    if note == "compile_error":
        return "error" if language in INTERPRETED else "compile_error"
    return {"wrong_answer": "failed", "timeout": "timeout", "runtime_error": "error"}[note]


def solution(problem: str, language: str, note: str, source: str) -> Solution:
    return Solution(problem, language, note, expected_status(language, note), source.lstrip("\n"))


def mutated(source: str, old: str, new: str) -> str:
    """`source` with `old` (which must occur) replaced by `new`: a wrong solution's one bug."""
    assert old in source, f"{old!r} is not in the source"
    return source.replace(old, new)


def runtime_error(language: str, source: str) -> str:
    """The correct `source` with a fault that ends it abnormally (a signal or a non-zero exit)."""
    if language in ("c", "cpp"):  # before main: abort() (SIGABRT). Not a write through a null
        # pointer: one that nothing reads is a dead store, which -O2 removes (the program passes).
        return source + "\nstatic void __attribute__((constructor)) broken_start(void) { __builtin_abort(); }\n"
    if language == "java":  # ArrayIndexOutOfBoundsException
        out, n = re.subn(
            r"(public static void main\(String\[\] args\)[^{]*\{)",
            r"\1\n        int[] seen = new int[args.length];\n        seen[0]++;",
            source,
            count=1,
        )
        assert n == 1
        return out
    if language == "go":  # a panic: assignment to entry in nil map
        return source + '\nfunc init() {\n\tvar seen map[string]int\n\tseen["x"]++\n}\n'
    if language == "rust":  # a panic: index out of bounds (exit 101)
        return mutated(
            source,
            "fn main() {",
            "fn main() {\n    let args: Vec<String> = std::env::args().skip(1).collect();\n    let _first = &args[0];",
        )
    if language == "python":  # IndexError
        return "import sys\nfirst = sys.argv[1]\n" + source
    if language == "nodejs":  # TypeError
        return "const first = process.argv[2].trim();\n" + source
    if language == "bash":  # unbound variable: exit 1
        return 'set -u\n: "$1"\n' + source
    raise ValueError(language)


def compile_error(language: str, source: str) -> str:
    """The correct `source` with an error its compiler (or interpreter's parser) rejects."""
    tail = {
        "c": "\nint broken(void) { return undefined_name; }\n",
        "cpp": "\nint broken() { return undefined_name; }\n",
        "java": "\nclass Broken { int f() { return undefinedName; } }\n",
        "go": "\nfunc broken() int { return undefinedName }\n",
        "rust": "\nfn broken() -> i32 { undefined_name }\n",
        "python": "\ndef broken(:\n    pass\n",
        "nodejs": "\nfunction broken( {\n",
    }
    if language == "bash":  # before anything runs: bash parses one command at a time
        return "if then fi (\n" + source
    return source + tail[language]


#: The two wrong kinds a problem's language gets, in turn (index: problem + language).
ROTATION = (("wrong_answer", "runtime_error"), ("runtime_error", "compile_error"), ("compile_error", "wrong_answer"))


def solutions_of(module: ModuleType, index: int) -> list[Solution]:
    """A problem module's solutions: its own (`SOLUTIONS`, if any), else per language the
    correct one (`CORRECT`) and two wrong ones by `ROTATION` (`WRONG_ANSWER` for a wrong answer)."""
    name = module.NAME
    if hasattr(module, "SOLUTIONS"):
        return list(module.SOLUTIONS)
    out = []
    for j, language in enumerate(LANGUAGES):
        correct = module.CORRECT[language]
        out.append(solution(name, language, "ok", correct))
        for note in ROTATION[(index + j) % len(ROTATION)]:
            if note == "wrong_answer":
                source = module.WRONG_ANSWER[language]
            elif note == "runtime_error":
                source = runtime_error(language, correct)
            else:
                source = compile_error(language, correct)
            out.append(solution(name, language, note, source))
    return out


from . import average, fib, maze, prefix, reverse, sum, transpose, wordfreq  # noqa: E402

MODULES: tuple[ModuleType, ...] = (sum, reverse, prefix, fib, wordfreq, maze, average, transpose)
#: name -> [(input, expected output)]
PROBLEMS: dict[str, list[tuple[str, str]]] = {m.NAME: list(m.CASES) for m in MODULES}
#: name -> the suite's `[program] compare` (tokens unless the problem says otherwise).
COMPARE: dict[str, str] = {m.NAME: getattr(m, "COMPARE", "tokens") for m in MODULES}
SOLUTIONS: list[Solution] = [s for i, m in enumerate(MODULES) for s in solutions_of(m, i)]


def write_suite(root: Path, problem: str) -> Path:
    """A program suite of `problem` under `root` (the corpus' limits and the problem's comparison)."""
    (root / "cases").mkdir(parents=True)
    (root / "suite.toml").write_text(
        'kind = "program"\n[program]\n'
        f'compare = "{COMPARE[problem]}"\n'
        f"time_limit_s = {TIME_LIMIT_S}\nmemory_bytes = {MEMORY_BYTES}\n"
        f"compile_timeout_s = {COMPILE_TIMEOUT_S}\n"
    )
    for i, (given, want) in enumerate(PROBLEMS[problem], 1):
        (root / "cases" / f"{i}.in").write_text(given)
        (root / "cases" / f"{i}.out").write_text(want)
    return root
