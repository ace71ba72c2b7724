"""The child process that makes plus inputs (`python -m verifier.bench.plus_worker`).

The canonical solutions and the checks are dataset code, trusted like the suites they become,
so they run on the host, never a candidate. What is not trusted is what a generated input makes
them do: an input can make a canonical solution slow, deep or large. So they run here, in a
process of their own that `verifier.bench.plus` starts, with its address space bounded
(`MEMORY_BYTES`: a MemoryError refuses the input, a crash costs only this process) and every
call on a CPU-time timer (`CALL_CPU_S`, `ITIMER_PROF`: charged CPU, so a busy host cannot make
an input look slow). The check's own inputs, the seeds, are recorded by running the problem's
`check` with a stand-in that records each call's arguments and answers with the canonical
solution's result (what EvalPlus does to find HumanEval's base inputs).

Protocol: one JSON request a line on stdin (`task_id`, `program`, `test`, `entry_point`,
`count`), one JSON answer a line on stdout (`task_id`, `bases`, `inputs`: repr text, `expected`:
the canonical answer's repr text for each input where `plain_answer` allows it, else null,
`tried`, `rejected`, `error`), in order. Whatever the dataset code prints goes to /dev/null. It
runs under a fixed hash seed (`plus._worker`): an answer ordered by string hashes is the same
in every run.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import random
import resource
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from verifier.bench.plus_gen import Args, generate, literal, plain_answer

#: Address space of this process: enough for Hypothesis and any fast canonical call.
MEMORY_BYTES = 2 * 1024**3
#: CPU a canonical call may take on one input: fast inputs only (the sandbox runs it again on
#: every plus input of every sample, and so does each candidate).
CALL_CPU_S = 0.02
#: CPU recording the seeds may take (the problem's whole check, with the canonical solution).
CHECK_CPU_S = 10.0
#: CPU one problem's generation may take in all; past it, what was kept so far is the answer.
PROBLEM_CPU_S = 30.0
#: Longest `repr` of a canonical answer kept (a plus input must be cheap to compare).
MAX_ANSWER_CHARS = 20_000
#: Seeds recorded at most (some checks call the candidate in a loop of random inputs).
MAX_SEEDS = 200
#: Frames a canonical call may use here: in the sandbox the trusted side calls it under Python's
#: default recursion limit (1,000) with the runner's and the test's frames below it (well under
#: 200), so an input it answers here only deeper than this would be its RecursionError there.
CALL_FRAMES = 800


class Slow(BaseException):
    """A canonical call ran out of its CPU time (a BaseException: dataset code that catches
    Exception, or everything, is interrupted again at the next tick)."""


class CpuTimer:
    """Raises `Slow` in a block once it has used its CPU time, and every `seconds` after that
    until the block ends; never outside a block."""

    def __init__(self) -> None:
        self.armed = False
        signal.signal(signal.SIGPROF, self._fire)

    def _fire(self, _signum: int, _frame: Any) -> None:
        if self.armed:
            raise Slow()

    @contextmanager
    def limit(self, seconds: float) -> Iterator[None]:
        self.armed = True
        signal.setitimer(signal.ITIMER_PROF, seconds, seconds)
        try:
            yield
        finally:
            self.armed = False
            signal.setitimer(signal.ITIMER_PROF, 0)


def record_seeds(timer: CpuTimer, program: str, test: str, entry_point: str) -> tuple[Callable[..., Any], list[Args]]:
    """The canonical function, and the arguments the problem's `check` calls it with."""
    space: dict[str, Any] = {"__name__": "canonical"}
    seeds: list[Args] = []
    random.seed(0)  # checks that draw their inputs from the global random (HumanEval/53) draw the same ones
    with timer.limit(CHECK_CPU_S):
        exec(compile(program, "<canonical>", "exec"), space)
        canonical = space[entry_point]

        def recorder(*args: Any) -> Any:
            if len(seeds) < MAX_SEEDS:
                seeds.append(copy.deepcopy(list(args)))
            return canonical(*args)

        checks: dict[str, Any] = dict(space)
        try:
            exec(compile(test, "<check>", "exec"), checks)
            checks["check"](recorder)
        except (Exception, Slow):  # noqa: BLE001 - the seeds recorded before it stay
            pass
    return canonical, [s for s in seeds if literal(s)]


@contextmanager
def _frames(room: int) -> Iterator[None]:
    """A recursion limit `room` frames above this one's, for the block."""
    depth, frame = 0, inspect.currentframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + room)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def judge_with(
    timer: CpuTimer,
    canonical: Callable[..., Any],
    budget_end: float,
    root_atol: float | None = None,
    answers: dict[str, str] | None = None,
) -> Callable[[Args], str | None]:
    """Why the canonical solution refuses an input (None: it is defined and fast there). With
    `root_atol` (answers checked as roots of the problem's `poly`, `plus.root_atol`): also where
    its own answer is not a root within half that (half: a last-bit difference of the sandbox's
    math library cannot move a kept input across the line). `answers` gets the canonical
    answer's text for each input it accepts (by the input's text) where `plain_answer` allows."""
    poly = getattr(canonical, "__globals__", {}).get("poly") if root_atol is not None else None

    def judge(args: Args) -> str | None:
        if time.process_time() > budget_end:
            return "the problem's generation budget was spent"
        try:
            with timer.limit(CALL_CPU_S), _frames(CALL_FRAMES):
                first = canonical(*copy.deepcopy(args))
                again = canonical(*copy.deepcopy(args))
                if root_atol is not None and not (poly is not None and abs(poly(*args, first)) <= root_atol / 2):
                    return "the canonical answer is not a root within atol"
        except Slow:
            return "the canonical solution was slow"
        except RecursionError:
            return "the canonical solution recursed too deep"
        except MemoryError:
            return "the canonical solution ran out of memory"
        except Exception:  # noqa: BLE001 - not defined there: EvalPlus's contract would refuse it too
            return "the canonical solution raised"
        try:
            same = bool(first == again) and repr(first) == repr(again)
            size = len(repr(first))
        except Exception:  # noqa: BLE001 - an answer that cannot be compared or shown
            return "the canonical answer cannot be compared"
        if not same:
            return "the canonical answer is not the same twice (or not equal to itself)"
        if size > MAX_ANSWER_CHARS:
            return "the canonical answer is too large"
        if answers is not None and root_atol is None and plain_answer(first):
            answers[repr(args)] = repr(first)
        return None

    return judge


def answer(timer: CpuTimer, request: dict[str, Any]) -> dict[str, Any]:
    """One problem's plus inputs."""
    task_id = request["task_id"]
    start = time.process_time()
    try:
        canonical, seeds = record_seeds(timer, request["program"], request["test"], request["entry_point"])
    except BaseException as exc:  # noqa: BLE001 - a problem whose canonical will not load gets none
        return {"task_id": task_id, "bases": 0, "inputs": [], "tried": 0, "rejected": {}, "error": repr(exc)[:300]}
    answers: dict[str, str] = {}
    judge = judge_with(timer, canonical, start + PROBLEM_CPU_S, request.get("root_atol"), answers)
    made = generate(seeds, judge, count=int(request["count"]))
    return {
        "task_id": task_id,
        "bases": len(seeds),
        "inputs": made.inputs,
        "expected": [answers.get(text) for text in made.inputs],
        "tried": made.tried,
        "rejected": made.rejected,
        "cpu_s": round(time.process_time() - start, 3),
        "error": None,
    }


def serve(requests: IO[str], out: IO[str]) -> None:
    timer = CpuTimer()
    for line in requests:
        if line.strip():
            out.write(json.dumps(answer(timer, json.loads(line))) + "\n")
            out.flush()


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    sys.setrecursionlimit(3000)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # the dataset code's prints never reach the answers
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    serve(sys.stdin, out)


if __name__ == "__main__":
    main()
