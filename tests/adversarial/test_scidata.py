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
    # The subclass stayed a handle in the candidate's process, and a handle refuses == (an abort).
    lying = failed["test_subclass_with_forged_eq"]
    assert lying.kind is FailureKind.NOT_PLAIN_DATA and "==" in lying.message, lying.message
