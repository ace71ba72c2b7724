"""Stronger tests for HumanEval problems (`verifier bench humaneval --plus`): the candidate
against the canonical solution on inputs made from the problem's own base inputs.

- **Made on the host, once per problem.** `make` runs `verifier.bench.plus_worker` (a child
  process, bounded in memory and CPU: the canonical solution is trusted code, an input it is
  called with is not), which records the inputs the problem's `check` calls the candidate with,
  mutates them by type and shape (`verifier.bench.plus_gen`, seeded: the same problem, the same
  inputs) and keeps those the canonical solution answers, fast and the same twice. The inputs
  are cached by the problem's digest (its canonical solution, check, entry point, the count
  asked for, the generator's version and Python's), one JSON file each under `cache_dir()`.
- **Run in the sandbox as part of the suite** (`plus_problem`): one test, the problem's own
  check, then (when it passed) the inputs in order, each comparing the candidate's answer with
  the canonical solution's as EvalPlus does (`datasets.DIFFERENTIAL`; floats within the
  problem's atol, EvalPlus's for HumanEval+), the canonical answer shipped in the suite where
  the host could keep it exactly (`plus_expected.txt`), computed there otherwise. It stops at
  the first input that fails and names it as Hypothesis names an explicit example, so the
  failing input is the evidence's falsifying example. (It was a Hypothesis test with the inputs
  as explicit examples: the same verdicts and names at twice the cost, Hypothesis' machinery
  around each call.)

A sample passes base when it passes the problem's own check (its ordinary evidence), and base +
plus when the plus suite's evidence passes too, as EvalPlus reports both.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from verifier.bench.datasets import DIFFERENTIAL, Problem
from verifier.bench.passk import PLUS_INPUTS
from verifier.suite import Manifest, Suite

#: Changes whenever the same problem would get other inputs (it is part of the cache key).
#: 2: the mutation's choices from a seeded `random.Random`, no longer Hypothesis draws under its
#: engine (a cold `--plus` spent most of its time in the engine's own work). 3: the canonical
#: answers kept beside the inputs (`expected`), made under a fixed hash seed. 4: the canonical
#: solution judged within the recursion room it has in the sandbox (`plus_worker.CALL_FRAMES`).
GENERATOR_VERSION = 4
#: EvalPlus's atol for HumanEval+ (its dataset: 1e-6 for /2 and /4, 1e-4 for /32, else 0, which
#: the comparison reads as 1e-6 for float answers).
ATOL = {"HumanEval/2": 1e-6, "HumanEval/4": 1e-6, "HumanEval/32": 1e-4}
#: Wall-clock backstop of the generator's process, per problem (its real bounds are CPU time,
#: `plus_worker.PROBLEM_CPU_S`: this only ends a hang, with room for a busy host).
WORKER_WALL_S_PER_PROBLEM = 300.0

PLUS_TEST = (
    '''"""HumanEval {task_id}, plus: the candidate against the canonical solution on inputs made on
the host from the types and shapes of the problem's base inputs (verifier.bench.plus)."""
import ast
import os

'''
    + DIFFERENTIAL
    + """

try:  # the candidate's answers in a few round trips, not one a call (docs/suites.md)
    from verifier_runner.calls import each
except ImportError:  # plain pytest, outside the sandbox

    def each(function, arguments):
        return (function(*copy.deepcopy(args)) for args in arguments)


with open(os.path.join(os.path.dirname(__file__), "plus_inputs.txt")) as _fh:
    PLUS = [_line.strip() for _line in _fh if _line.strip()]
# The canonical answer of each input, as the host computed it when it made the input (its text
# kept only where it comes back exactly: no float, short), a line each; an empty line: the
# canonical solution answers here, on a copy of the input.
with open(os.path.join(os.path.dirname(__file__), "plus_expected.txt")) as _fh:
    EXPECTED = [_line.strip() for _line in _fh]
assert len(EXPECTED) == len(PLUS), "plus_expected.txt: not one line an input"


# The problem's own check (the base suite's test file, kept under a name no runner collects).
_base = {{"__name__": "humaneval_check"}}
with open(os.path.join(os.path.dirname(__file__), "humaneval_check.py"), "rb") as _fh:
    exec(compile(_fh.read(), "humaneval_check.py", "exec", dont_inherit=True), _base)


def _note(exc, text):
    # BaseException's own add_note: the exception may be the candidate's, with an add_note or
    # __notes__ of its own; where its notes take no other, the failure stands, unnamed.
    try:
        BaseException.add_note(exc, text)
    except Exception:
        pass


# The problem's own check first (the host counts a plus pass only with the base suite's too):
# a sample that fails it fails base + plus there, and its plus inputs are not run
# (what a plus input would add to that verdict is nothing but its cost, a whole time limit for
# one that loops). Then the inputs in their order. The first that fails
# ends the test and is named, in the words the runner reads from Hypothesis' explicit examples,
# as the evidence's falsifying example: the input's own text, as the host wrote it, before the
# candidate saw it.
def test_plus():
    try:
        _base["test_check"]()
    except Exception as _exc:
        _note(_exc, "(the problem's own check failed: the plus inputs were not run)")
        raise
    _inputs = ast.literal_eval("[" + ",".join(PLUS) + "]")  # one parse, not one an input
    _known = ast.literal_eval("[" + ",".join(_text or "..." for _text in EXPECTED) + "]")
    _answers = each(candidate, _inputs)  # the calls get copies (each), never these
    for _text, _args, _expected in zip(PLUS, _inputs, _known):
        try:
            _check(_args, lambda: next(_answers), _expected)
        except Exception as _exc:
            _note(_exc, "Falsifying explicit example: test_plus(args=" + _text + ")")
            raise
"""
)


def cache_dir() -> Path:
    """Where made inputs are kept, beside the project's other caches."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "verifier" / "bench" / "plus"


def can_plus(problem: Problem) -> bool:
    """Plus inputs are made for HumanEval-format problems with a canonical solution."""
    return problem.format == "humaneval" and problem.canonical is not None


def digest(problem: Problem, count: int) -> str:
    """The cache key of a problem's plus inputs: everything that decides them."""
    key = {
        "generator": GENERATOR_VERSION,
        "python": list(sys.version_info[:2]),
        "canonical": problem.canonical,
        "test": problem.line.get("test"),
        "entry_point": problem.line.get("entry_point"),
        "count": count,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class PlusInputs:
    """One problem's plus inputs (`repr` text of each argument list, in the order made), how
    many base inputs they were made from, how many were tried and why the others were not kept."""

    task_id: str
    digest: str
    inputs: tuple[str, ...]
    bases: int
    tried: int
    rejected: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    #: The canonical answer's text for each input (None: computed in the sandbox), or () for none.
    expected: tuple[str | None, ...] = ()

    def answers(self) -> list[str | None]:
        """The canonical answer's text for each input, None where the sandbox computes it."""
        return list(self.expected) if self.expected else [None] * len(self.inputs)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": GENERATOR_VERSION,
            "task_id": self.task_id,
            "digest": self.digest,
            "inputs": list(self.inputs),
            "bases": self.bases,
            "tried": self.tried,
            "rejected": self.rejected,
            "expected": list(self.expected),
        }

    @classmethod
    def from_answer(cls, answer: Mapping[str, Any], key: str) -> PlusInputs:
        """From the worker's answer (or a cache file); raises ValueError when it is not one."""
        inputs = answer.get("inputs")
        if not isinstance(inputs, list) or not all(isinstance(i, str) and "\n" not in i for i in inputs):
            raise ValueError("inputs: not a list of one-line strings")
        for text in inputs:  # each one argument list, as a Python literal (what the suite reads)
            if not isinstance(ast.literal_eval(text), list):
                raise ValueError(f"inputs: not an argument list: {text[:100]!r}")
        expected = answer.get("expected") or []
        if not isinstance(expected, list) or len(expected) not in (0, len(inputs)):
            raise ValueError("expected: not one answer an input")
        for text in expected:  # each a Python literal, or None
            if text is not None and (not isinstance(text, str) or "\n" in text or not text.strip()):
                raise ValueError("expected: not a one-line answer")
            if text is not None:
                ast.literal_eval(text)
        return cls(
            task_id=str(answer["task_id"]),
            digest=key,
            inputs=tuple(inputs),
            bases=int(answer.get("bases", 0)),
            tried=int(answer.get("tried", 0)),
            rejected={str(k): int(v) for k, v in dict(answer.get("rejected") or {}).items()},
            error=None if answer.get("error") is None else str(answer["error"]),
            expected=tuple(expected),
        )


def _cached(path: Path, key: str) -> PlusInputs | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("digest") != key or data.get("version") != GENERATOR_VERSION:
            return None
        return PlusInputs.from_answer(data, key)
    except (OSError, ValueError, KeyError, TypeError, SyntaxError, MemoryError, RecursionError):  # not ours: made again
        return None


def _store(path: Path, made: PlusInputs) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(made.to_json()) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def make(
    problems: Mapping[str, Problem],
    *,
    count: int = PLUS_INPUTS,
    cache: Path | None = None,
    fresh: bool = False,
    say: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, PlusInputs], int]:
    """Plus inputs for every problem `can_plus` takes, from `cache` (a folder) where it has them
    (unless `fresh`), else made now (and stored there): (inputs by task id, how many problems
    were made now)."""
    keys = {task: digest(p, count) for task, p in problems.items() if can_plus(p)}
    found: dict[str, PlusInputs] = {}
    for task, key in keys.items():
        hit = _cached(cache / f"{key}.json", key) if cache is not None and not fresh else None
        if hit is not None:
            found[task] = hit
    todo = [task for task in keys if task not in found]
    if todo:
        say(f"making plus inputs for {len(todo)} problem(s) on the host (cached for later runs)")
    requests = [_request(problems[task], count) for task in todo]

    def keep(answer: dict[str, Any]) -> None:
        made = PlusInputs.from_answer(answer, keys[str(answer["task_id"])])
        if cache is not None and made.error is None:
            _store(cache / f"{made.digest}.json", made)

    processes = max(1, min(len(requests), os.cpu_count() or 1))
    workers = _Workers()
    with ThreadPoolExecutor(processes) as pool:  # one generator process a core, each its share
        shares = pool.map(lambda share: workers.ask(share, keep), [requests[i::processes] for i in range(processes)])
        try:
            answers = {task: answer for share in shares for task, answer in share.items()}
        except BaseException:  # Ctrl-C: end every generator process now, start no other
            workers.halt()
            raise
    for task, answer in answers.items():
        found[task] = PlusInputs.from_answer(answer, keys[task])
    return {task: found[task] for task in keys}, len(todo)


def root_atol(problem: Problem) -> float | None:
    """How close to zero the problem's `poly` must be at an answer, for a problem whose answers
    are checked as roots (HumanEval/32's find_zero: any root is right, as in EvalPlus), else None.
    The plus test checks the candidate's answer so; the generator keeps only inputs where the
    canonical solution's answer passes that check."""
    entry, program = problem.line.get("entry_point"), problem.canonical or ""
    # The atol the plus test checks the root with (`plus_problem`), whatever it is.
    return float(ATOL.get(problem.task_id, 0)) if entry == "find_zero" and "def poly(" in program else None


def _request(problem: Problem, count: int) -> dict[str, Any]:
    return {
        "task_id": problem.task_id,
        "program": problem.canonical,
        "test": problem.line["test"],
        "entry_point": problem.line["entry_point"],
        "count": count,
        "root_atol": root_atol(problem),
    }


class _Workers:
    """The generator processes of one `make`: each share asks its own, one problem at a time;
    `halt` (Ctrl-C) kills the live ones and lets no other start."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.live: set[subprocess.Popen[str]] = set()

    def halt(self) -> None:
        self.stopped.set()
        with self.lock:
            for proc in self.live:
                proc.kill()

    def ask(
        self, requests: list[dict[str, Any]], on_answer: Callable[[dict[str, Any]], None]
    ) -> dict[str, dict[str, Any]]:
        """Every request's answer, each handed to `on_answer` as it arrives (so an interrupted
        run keeps what it made). When a process ends before it answered (out of memory, a
        crash, the wall-clock backstop), the problem it was on gets an error and a new process
        takes the rest."""
        answers: dict[str, dict[str, Any]] = {}
        todo = list(requests)
        while todo and not self.stopped.is_set():
            with tempfile.TemporaryFile() as err, _worker(err) as proc:
                with self.lock:
                    self.live.add(proc)
                try:
                    self._serve(proc, todo, answers, on_answer)
                finally:
                    with self.lock:
                        self.live.discard(proc)
                if todo and not self.stopped.is_set():  # the one it was on when it stopped
                    proc.kill()
                    proc.wait()
                    err.seek(0)
                    said = err.read().decode(errors="replace").strip()[-200:]
                    first = todo.pop(0)
                    why = f"the generator's process ended ({proc.returncode}): {said}"
                    answers[first["task_id"]] = {"task_id": first["task_id"], "inputs": [], "error": why}
        return answers

    def _serve(
        self,
        proc: subprocess.Popen[str],
        todo: list[dict[str, Any]],
        answers: dict[str, dict[str, Any]],
        on_answer: Callable[[dict[str, Any]], None],
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        while todo and not self.stopped.is_set():
            backstop = threading.Timer(WORKER_WALL_S_PER_PROBLEM, proc.kill)
            backstop.start()
            try:
                proc.stdin.write(json.dumps(todo[0]) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except OSError:  # the process is gone
                line = ""
            finally:
                backstop.cancel()
            if not line:
                return
            answer = json.loads(line)
            answers[str(answer["task_id"])] = answer
            on_answer(answer)
            todo.pop(0)


@contextmanager
def _worker(err: IO[bytes]) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier.bench.plus_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        bufsize=1,
        # A fixed hash seed: an answer ordered by string hashes is the same whichever run made
        # it (the cache does not depend on the process that filled it). The sandbox's seed is
        # its own: there, an answer that is not the host's is asked of the canonical solution
        # again (`datasets.DIFFERENTIAL`).
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    try:
        yield proc
    finally:
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        proc.kill()
        proc.wait()


def plus_problem(problem: Problem, made: PlusInputs) -> Problem:
    """The problem's plus suite: one test, the problem's own check, then (when it passed) the
    differential test over the plus inputs (with the problem's limits, so a calibrated limit
    holds for both)."""
    entry = str(problem.line["entry_point"])
    text = PLUS_TEST.format(
        task_id=problem.task_id,
        program=problem.canonical or "",
        atol=ATOL.get(problem.task_id, 0),
        root_oracle=root_atol(problem) is not None,
        entry_point=entry,
    )
    base = problem.suite
    (check,) = base.files.values()  # a HumanEval suite: its one test file (datasets.HUMANEVAL_TEST)
    files = {
        "humaneval_check.py": check,
        "test_plus.py": text.encode(),
        "plus_inputs.txt": "".join(line + "\n" for line in made.inputs).encode(),
        "plus_expected.txt": "".join((text or "") + "\n" for text in made.answers()).encode(),
    }
    manifest = Manifest(
        runner="direct", trusted_process="shared", candidate_process="per-run", limits=dict(base.manifest.limits)
    )
    return replace(problem, suite=Suite(files=files, manifest=manifest, name=f"{base.name}-plus"))
