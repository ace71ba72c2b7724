"""A candidate class that is also a control-flow exception (`class E(ValueError, StopIteration)`)
must never steer a test: raised inside `map` or a generator, a rebuilt class with StopIteration
among its bases ended the test's iteration silently, and the inputs after it were never judged
(a forged pass). It is an abort, like a plain StopIteration; a warning of such a class too.

Also the values one side sends and the other would refuse (a big int, a long Decimal): an honest
candidate's answer crosses, and the test's own refused value is the test's refusal, not a crash
of the candidate."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier import Candidate, Limits, Verifier

pytestmark = [pytest.mark.docker]

LIMITS = Limits(timeout_s=30, call_timeout_s=3, memory_bytes=256 * 1024**2, output_bytes=256 * 1024)


@pytest.fixture(scope="module")
def checker(sandbox_image: str) -> Verifier:
    return Verifier(image=sandbox_image, limits=LIMITS)


def _suite(root: Path, text: str) -> Path:
    folder = root / "suite"
    folder.mkdir()
    (folder / "test_f.py").write_text(text)
    (folder / "suite.toml").write_text('runner = "direct"\n')
    return folder


STEERING = {
    "stop_iteration": "class Sneaky(ValueError, StopIteration):\n    pass",
    "stop_async_iteration": "class Sneaky(ValueError, StopAsyncIteration):\n    pass",
    "deep": "class Base(StopIteration):\n    pass\nclass Sneaky(KeyError, Base):\n    pass",
}
_RAISES = """
{cls}
def f(x):
    if x >= 5:
        raise Sneaky("done")  # wrong from 5 on
    return 2 * x
"""
_MAP = """
from solution import f

def test_map():
    xs = list(range(10))
    for got, x in zip(map(f, xs), xs):
        assert got == 2 * x

def test_generator():
    def answers():
        for x in range(10):
            yield x, f(x)
    assert [x for x, _ in answers()] == list(range(10))
"""


@pytest.mark.parametrize("cls", list(STEERING))
def test_a_raised_class_that_is_also_control_flow_is_an_abort(checker: Verifier, tmp_path: Path, cls: str) -> None:
    ev = checker.check(Candidate.from_text(_RAISES.format(cls=STEERING[cls])), _suite(tmp_path, _MAP))
    assert not ev.ok and ev.counts.failed == 2, (ev.reason, [(f.test_id, f.message) for f in ev.failures])
    assert all("cannot cross into the tests as itself" in f.message for f in ev.failures), ev.failures


def test_a_warning_class_that_is_also_control_flow_is_an_abort(checker: Verifier, tmp_path: Path) -> None:
    candidate = """
import warnings
class Sneaky(UserWarning, StopIteration):
    pass
def f(x):
    if x >= 5:
        warnings.warn(Sneaky("done"))
        return -1  # wrong from 5 on
    return 2 * x
"""
    errors = "import warnings\nfrom solution import f\nwarnings.simplefilter('error')"
    suite = _MAP.replace("from solution import f", errors)
    ev = checker.check(Candidate.from_text(candidate), _suite(tmp_path, suite))
    assert not ev.ok and ev.counts.failed == 2, (ev.reason, [(f.test_id, f.message) for f in ev.failures])


def test_big_ints_cross_both_ways(checker: Verifier, tmp_path: Path) -> None:
    """Beyond 4,300 digits Python refuses to turn an int into decimal text: they cross as hex."""
    candidate = "def f(x):\n    return x * 10**5000 + 1\n"
    suite = _suite(
        tmp_path,
        "from solution import f\n\ndef test_big():\n    assert f(10**6000) == 10**11000 + 1\n"
        "    assert f(-(2**60)) == -(2**60) * 10**5000 + 1\n",
    )
    ev = checker.check(Candidate.from_text(candidate), suite)
    assert ev.ok, (ev.reason, [(f.message, f.detail_untrusted[-300:]) for f in ev.failures])


def test_a_decimal_the_candidate_could_not_read_is_the_tests_refusal(checker: Verifier, tmp_path: Path) -> None:
    candidate = "def f(x):\n    return x + 1\n"
    suite = _suite(
        tmp_path,
        "from decimal import Decimal\nfrom solution import f\n\ndef test_long():\n"
        "    assert f(Decimal('1' * 200_000)) == Decimal('1' * 200_000) + 1\n",
    )
    ev = checker.check(Candidate.from_text(candidate), suite)
    (failure,) = ev.failures
    assert failure.kind.value == "not_plain_data" and "the test passed a Decimal" in failure.message, failure


def test_a_candidate_context_manager_never_suppresses_the_tests_assertion(checker: Verifier, tmp_path: Path) -> None:
    """Its __exit__ returning True swallowed the test's AssertionError (and read its text, the
    expected value): a forged pass. The test's own KeyError it may suppress, as before."""
    candidate = "class Account:\n    def __init__(self, n):\n        self.n = n\n    def balance(self):\n"
    candidate += "        return self.n\n    def __enter__(self):\n        return self\n"
    candidate += "    def __exit__(self, *exc):\n        return True\n"
    suite = _suite(
        tmp_path,
        "from solution import Account\n\ndef test_in_with():\n    with Account(10) as acct:\n"
        "        assert acct.balance() == 15\n\ndef test_key_error_swallowed():\n"
        "    with Account(1):\n        {}['missing']\n",
    )
    ev = checker.check(Candidate.from_text(candidate), suite)
    assert [f.test_id.rsplit("::", 1)[1] for f in ev.failures] == ["test_in_with"], ev.failures
    assert ev.failures[0].kind.value == "assertion"


def test_an_exception_whose_text_cannot_be_made_is_the_candidates_failure(checker: Verifier, tmp_path: Path) -> None:
    """`str()` of a rebuilt exception raised (an int arg beyond 4,300 digits, a `__str__` that
    raises): the direct runner ended the run as the verifier's failure, judging no test."""
    candidate = "class Boom:\n    def __str__(self):\n        raise RuntimeError('no')\n"
    candidate += "def f(x):\n    raise ValueError(10**5000) if x else ValueError(Boom())\n"
    suite = _suite(
        tmp_path,
        "from solution import f\n\ndef test_big():\n    assert f(1) == 2\n\ndef test_boom():\n    assert f(0) == 0\n\n"
        "def test_ok():\n    pass\n",
    )
    ev = checker.check(Candidate.from_text(candidate), suite)
    assert ev.fault.value == "candidate" and ev.counts.passed >= 1 and ev.counts.failed >= 1, (ev.status, ev.reason)
    assert ev.failures[0].kind.value in ("exception", "not_plain_data"), ev.failures


_EXACT = """
import math
from decimal import Decimal
from fractions import Fraction
from solution import echo, negate

def _nest(depth):
    value = 0
    for _ in range(depth - 1):
        value = [value]
    return value

def test_a_nan_keeps_its_sign_and_payload():
    assert math.copysign(1.0, negate(float("nan"))) == -1.0
    import struct
    odd = struct.unpack(">d", bytes.fromhex("7ff8000000000123"))[0]
    assert struct.pack(">d", echo(odd)).hex() == "7ff8000000000123"
    assert math.copysign(1.0, echo(complex(0.0, -float("nan"))).imag) == -1.0

def test_as_deep_an_argument_as_an_answer():
    assert echo(_nest(200)) == _nest(200)

def test_a_fraction_too_big_to_reduce_is_refused_by_the_sender():
    assert echo(Fraction(3, 7)) == Fraction(3, 7)
    echo(Fraction(2**70000 + 1, 3))
"""


def test_values_cross_exactly_or_are_refused_by_their_sender(checker: Verifier, tmp_path: Path) -> None:
    candidate = "def echo(x):\n    return x\ndef negate(x):\n    return -x\n"
    ev = checker.check(Candidate.from_text(candidate), _suite(tmp_path, _EXACT))
    assert ev.counts.passed == 2, (ev.reason, [(f.test_id, f.message) for f in ev.failures])
    (failure,) = ev.failures
    assert failure.test_id.endswith("refused_by_the_sender") and "the test passed a Fraction" in failure.message
