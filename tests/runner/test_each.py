"""`calls.each` (many calls of one candidate function in a few round trips) in the real sandbox.

Its promise: the answers, and what a call raises or an abort of it, at their places exactly as
one call at a time would give them. The differential test runs the same candidates through a
test that calls one at a time and one that uses `each`, and wants the same verdict, failure kind,
message and falsifying example; the others hold the candidate side to where `each` must stop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier import Candidate, Limits, Verifier
from verifier.runner import proxy

pytestmark = [pytest.mark.docker]

LIMITS = Limits(timeout_s=30, call_timeout_s=2, memory_bytes=256 * 1024**2, output_bytes=256 * 1024)

#: f(x) = 2x on 0..39, except where a candidate below differs; `log()` is what it was called with.
_BASE = """
import os, time
_log = []
def log():
    return list(_log)
def f(x):
    _log.append(x)
{body}
    return 2 * x
"""
CANDIDATES = {
    "correct": "",
    "wrong_at_5": "    if x == 5: return 11",
    "raises_at_5": "    if x == 5: raise KeyError('five')",
    "wrong_at_3_then_hangs_at_4": "    if x == 3: return 0\n    if x == 4: time.sleep(60)",
    "hangs_at_6": "    if x == 6: time.sleep(60)",
    "dies_at_9": "    if x == 9: os._exit(3)",
    "wrong_at_8_then_dies_at_9": "    if x == 8: return 1\n    if x == 9: os._exit(3)",
    "not_plain_at_7": "    if x == 7: return memoryview(b'x')",
    "handle_at_2": "    if x == 2: return object()",
    "float_at_30": "    if x == 30: return 60.0",
    # the text of an answer the test never got (6 is in 5's chunk) must not touch 5's example
    "wrong_at_5_then_says_5": "    if x == 5: return 11\n    if x == 6: return 'x=5'",
}

_TEST = """
from solution import f
{each}

def test_f():
    for x in range(40):
        try:
            assert {answer} == 2 * x, "differs"
        except Exception as exc:
            exc.add_note("Falsifying explicit example: test_f(x=" + repr(x) + ")")
            raise
"""
ONE_AT_A_TIME = _TEST.format(each="", answer="f(x)")
EACH = _TEST.format(
    each="from verifier_runner.calls import each\n_answers = each(f, [(x,) for x in range(40)])",
    answer="next(_answers)",
)


def _suite(root: Path, name: str, text: str, per_run: bool = True) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "test_f.py").write_text(text)
    process = 'candidate_process = "per-run"\n' if per_run else ""
    (folder / "suite.toml").write_text('runner = "direct"\n' + process)
    return folder


@pytest.fixture(scope="module")
def checker(sandbox_image: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS)


def _outcome(ev: object) -> tuple[object, ...]:
    failures = getattr(ev, "failures")  # noqa: B009
    return (
        getattr(ev, "status"),  # noqa: B009
        tuple((f.kind, f.message, f.falsifying_example) for f in failures),
    )


@pytest.mark.parametrize("name", list(CANDIDATES))
def test_each_gives_the_verdict_of_one_call_at_a_time(checker: Verifier, tmp_path: Path, name: str) -> None:
    candidate = Candidate.from_text(_BASE.format(body=CANDIDATES[name] or "    pass"))
    single = checker.check(candidate, _suite(tmp_path, "single", ONE_AT_A_TIME))
    batched = checker.check(candidate, _suite(tmp_path, "each", EACH))
    assert _outcome(batched) == _outcome(single), (single.reason, batched.reason)
    assert batched.ok is (name in ("correct", "float_at_30"))


_STOPS = """
import warnings
import pytest
from verifier_runner.calls import each
from solution import big, double, f, g, k, log, w

def test_stops_at_an_exception():
    got = []
    with pytest.raises(KeyError):
        for answer in each(f, [(x,) for x in range(40)]):
            got.append(answer)
    assert got == [2 * x for x in range(5)]
    assert log() == list(range(6))  # chunks 1, 2, 4: it stopped at 5, the call that raised

def test_an_answer_with_a_handle_ends_its_chunk():
    answers = each(k, [(x,) for x in range(1, 6)])
    assert next(answers) == 2  # chunk [1]
    assert type(next(answers)).__name__ == "object"  # chunk [2, 3]: it stopped at 2
    assert log() == [1, 2]
    assert list(answers) == [6, 8, 10]
    assert log() == [1, 2, 3, 4, 5]

def test_answers_of_many_bytes_end_their_chunk():
    answers = each(big, [(x,) for x in range(10)])
    assert [next(answers) for _ in range(4)] == [str(x) * 100_000 for x in range(4)]
    assert log() == [0, 1, 2, 3, 4, 5]  # chunk [3..6] ended at 5: three answers of 100 kB each
    assert list(answers) == [str(x) * 100_000 for x in range(4, 10)]

def test_warnings_come_with_their_answers():
    answers = each(w, [(x,) for x in range(8)])
    for x in range(8):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert next(answers) == x
        assert [str(c.message) for c in caught] == ([f"w{x}"] if x % 2 else []), x

def test_the_arguments_are_not_carried_back():
    arg = [1]
    assert list(each(g, [(arg,)])) == [None]
    assert arg == [1]

def test_any_other_callable_is_called_when_its_answer_is_asked_for():
    seen = []
    def h(x):
        seen.append(x)
        return -x
    answers = each(h, [(1,), (2,)])
    assert seen == []
    assert next(answers) == -1 and seen == [1]
    assert list(answers) == [-2]

def test_many_calls_in_order():
    assert list(each(double, [(x,) for x in range(1000)])) == [2 * x for x in range(1000)]
"""

_STOPPING = """
import warnings
_log = []
def log():
    return list(_log)
def f(x):
    _log.append(x)
    if x == 5:
        raise KeyError(x)
    return 2 * x
def k(x):
    _log.append(x)
    return object() if x == 2 else 2 * x
def w(x):
    if x % 2:
        warnings.warn(f"w{x}")
    return x
def big(x):
    _log.append(x)
    return str(x) * 100_000
def double(x):
    return 2 * x
def g(values):
    values.append(2)
"""


def test_the_candidate_side_stops_where_each_must(checker: Verifier, tmp_path: Path) -> None:
    folder = _suite(tmp_path, "stops", _STOPS)
    (folder / "suite.toml").write_text('runner = "direct"\n')  # a new candidate process per test
    ev = checker.check(Candidate.from_text(_STOPPING), folder)
    assert ev.ok, (ev.reason, [(f.test_id, f.message, f.detail_untrusted[-400:]) for f in ev.failures])
    assert ev.counts.passed == 7


def test_only_the_tests_functions_for_candidate_functions_are_sent_as_chunks() -> None:
    """`forwarded` knows a candidate function by the code object only `_make_function` makes:
    a look-alike (same name, same free variables) is any other callable."""
    session, module, name = object(), "solution", "f"

    def _make_function(session: object, module: str, name: str) -> object:
        def forward(*args: object, **kwargs: object) -> object:
            return (session, module, name, args, kwargs)

        return forward

    assert proxy.forwarded(_make_function(session, module, name)) is None
    made = proxy._make_function(session, module, name)  # type: ignore[arg-type]
    assert proxy.forwarded(made) == (session, module, name)
    assert proxy.forwarded(print) is None
    assert proxy.forwarded(lambda: None) is None


_UNASKED = """
import time, warnings
def f(x):
    if x == 1:
        warnings.warn(BytesWarning(bytearray(b"abc")))  # its argument cannot cross: the warning's text does
    if x == 5:
        time.sleep(60)  # only ever reached in a chunk, never asked for
    return 2 * x
"""
_ASKS_FOR_FOUR = """
import warnings
from verifier_runner.calls import each
from solution import f

def _first_four():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for i, answer in enumerate(each(f, [(x,) for x in range(10)])):
            assert answer == 2 * i
            if i == 3:
                return

def test_1():
    _first_four()

def test_2():
    _first_four()

def test_3():
    _first_four()
"""


def test_what_the_test_never_asked_for_is_not_held_against_it(checker: Verifier, tmp_path: Path) -> None:
    """A warning whose arguments stay behind ends no chunk (a chunk ends on a reference the reply
    holds, not on one the candidate made and dropped), and a call the test never asked for that
    timed out counts toward no limit of later calls (each test here ends one: three of them
    would have exceeded the run's two)."""
    ev = checker.check(Candidate.from_text(_UNASKED), _suite(tmp_path, "unasked", _ASKS_FOR_FOUR, per_run=False))
    assert ev.ok, (ev.reason, [(f.test_id, f.message) for f in ev.failures])


_STALE = """
from verifier_runner.calls import each
from solution import f, make
KEPT = []

def test_1():
    KEPT.append(make())

def test_2():
    answers = each(f, [(0,), (1,), (2,), (KEPT[0],)])
    assert [next(answers) for _ in range(3)] == [0, 2, 4]  # wrong at 2: judged before the stale handle
"""


def test_an_argument_that_cannot_be_sent_is_refused_at_its_place(checker: Verifier, tmp_path: Path) -> None:
    candidate = "class Thing:\n    pass\ndef make():\n    return Thing()\n"
    candidate += "def f(x):\n    return 5 if x == 2 else 2 * x\n"
    ev = checker.check(Candidate.from_text(candidate), _suite(tmp_path, "stale", _STALE, per_run=False))
    failure = next(f for f in ev.failures if f.test_id.endswith("test_2"))
    assert failure.kind.value == "assertion", failure
