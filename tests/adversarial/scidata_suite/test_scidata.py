"""numpy/pandas values crossing from a hostile candidate (tests/adversarial/test_scidata.py).
The first tests are the control: real data crosses, and mutation comes back. Each other test
meets one technique; each must fail, never pass."""

import numpy as np
import pandas as pd
import solution


def test_real_values_cross_as_the_tests_own_types():
    array, series, frame = solution.legit()
    assert type(array) is np.ndarray and array.dtype == np.int32
    np.testing.assert_array_equal(array, np.arange(6, dtype=np.int32).reshape(2, 3))
    pd.testing.assert_series_equal(series, pd.Series([0.5, 1.5], index=pd.Index(["a", "b"], name="k"), name="s"))
    pd.testing.assert_frame_equal(frame, pd.DataFrame({"x": [1, 2], "y": ["u", "v"]}))


def test_mutation_comes_back():
    values = np.zeros(3)
    frame = pd.DataFrame({"x": [1, 2]})
    solution.mutate(values, frame)
    assert values.tolist() == [1.0, 2.0, 3.0]
    assert list(frame.columns) == ["x", "y"]


def test_forged_shape():
    """A reply claiming a million floats with 8 bytes of data: refused before any allocation."""
    solution.forged_shape()


def test_object_array_carrying_a_handle():
    """An object array whose element is a forged reference: elements must be plain data."""
    solution.object_array_with_handle()


def test_huge_shape():
    """A dimension of 2**50 (the bytes match: zero elements): refused by the shape bound."""
    solution.huge_shape()


def test_forged_dtype():
    """A structured dtype text, which numpy would parse: refused by the dtype pattern."""
    solution.forged_dtype()


def test_subclass_with_forged_eq():
    """An ndarray subclass whose __eq__ says True: not data, a handle, whose == is refused."""
    assert solution.lying_subclass() == np.array([9, 9, 9])
