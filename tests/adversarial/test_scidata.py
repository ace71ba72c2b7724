"""numpy/pandas values from a hostile candidate (issue 24 §2), between real processes in the
suite's environment image: forged wire forms and a lying ndarray subclass each fail their test,
as the candidate's failure, while real arrays, Series and DataFrames cross and come back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.test_forgery import LIMITS
from verifier import Status, Verifier
from verifier.evidence import FailureKind, Fault

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HERE = Path(__file__).parent


def test_forged_numpy_values_fail_and_real_ones_cross(sandbox_image: str) -> None:
    with Verifier(image=sandbox_image, limits=LIMITS.model_copy(update={"memory_bytes": 512 * 1024**2})) as v:
        ev = v.check(HERE / "scidata" / "forger.py", HERE / "scidata_suite")
    assert (ev.status, ev.fault) == (Status.FAILED, Fault.CANDIDATE), (ev.reason, ev.failures)
    assert ev.environment is not None and ev.environment.requirements == ["numpy>=2,<3", "pandas==2.*"]
    failed = {f.test_id.rpartition("::")[2]: f for f in ev.failures}
    forged = {"test_forged_shape", "test_object_array_carrying_a_handle", "test_huge_shape", "test_forged_dtype"}
    assert set(failed) == forged | {"test_subclass_with_forged_eq"}, [(f.test_id, f.message) for f in ev.failures]
    assert ev.counts.passed == 2  # the control: real values crossed, mutation came back
    for name in forged:  # refused as malformed data, never rebuilt
        assert failed[name].kind is FailureKind.NOT_PLAIN_DATA, (name, failed[name].message)
        assert "malformed" in failed[name].message, (name, failed[name].message)
    # The subclass is not an ndarray, so it does not cross as data; it has a buffer, so it does not
    # become a handle either (issue 32: a handle could not answer memoryview() as it does): an abort.
    lying = failed["test_subclass_with_forged_eq"]
    assert lying.kind is FailureKind.NOT_PLAIN_DATA and "cannot cross" in lying.message, lying.message
    assert "with a buffer" in lying.detail_untrusted, lying.detail_untrusted


def test_values_answer_as_the_real_ones_or_abort(sandbox_image: str) -> None:
    """Issue 32 §1: a copy that answers differently from the real value. Every `test_forged_*`
    (a wrong function that a copy used to pass: trailing NULs lost, the caller's array returned
    as a copy, in-place changes of shape, dtype, flags, index name and dtype, columns' name,
    pandas flags and attrs dropped, a read-only argument made writeable) fails, as it does with
    plain pytest; every `test_correct_*` (a zero-size str_, a custom business-day index, a view
    written through, the same object returned, aliased arguments, a transposed or read-only
    result) passes, as it does with plain pytest."""
    suite = HERE / "scidata_exact_suite"
    with Verifier(image=sandbox_image, limits=LIMITS.model_copy(update={"memory_bytes": 512 * 1024**2})) as v:
        ev = v.check(HERE / "scidata" / "exactness.py", suite)
    assert (ev.status, ev.fault) == (Status.FAILED, Fault.CANDIDATE), (ev.reason, ev.failures)
    names = [line[4:].partition("(")[0] for line in (suite / "test_exact.py").read_text().splitlines()]
    tests = {n for n in names if n.startswith("test_")}
    forged = {n for n in tests if n.startswith("test_forged_")}
    failed = {f.test_id.rpartition("::")[2]: f for f in ev.failures}
    assert set(failed) == forged, [(f.test_id, f.kind, f.message) for f in ev.failures]
    assert ev.counts.passed == len(tests - forged)
