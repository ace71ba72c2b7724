import math
import operator
import os
import pathlib
import weakref

import pytest

from solution import Amount, amount, countdown, defaults, where


def test_numeric_special_methods():
    a = amount(2.5)
    assert math.trunc(a) == 7
    assert math.floor(a) == 5
    assert math.ceil(a) == 6
    assert round(a) == 4
    assert round(a, 2) == ("rounded", 2)
    assert pow(a, 2, 5) == ("pow", 2, 5)
    assert a**3 == ("pow", 3, None)
    assert bytes(a) == b"amount"
    assert operator.length_hint(a) == 12
    assert float(a) == 2.5
    assert not hasattr(a, "__int__") and not hasattr(a, "__index__") and not hasattr(a, "__len__")


def test_int_falls_back_to_trunc_as_python_does():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert int(amount(1)) == 7


def test_paths():
    w = where("/tmp/x")
    assert isinstance(w, os.PathLike)
    assert os.fspath(w) == "/tmp/x"
    assert pathlib.Path(w) == pathlib.Path("/tmp/x")


def test_attributes_and_patterns():
    a = amount(3)
    del a.x
    assert not hasattr(a, "x")
    match amount(9):
        case Amount(x):
            assert x == 9
        case _:
            pytest.fail("no match")


def test_weak_references():
    a = amount(1)
    ref = weakref.ref(a)
    assert ref() is a


def test_mapping_and_sequence_fallbacks():
    d = defaults()
    assert d["a"] == 1
    assert d["zzz"] == "default zzz"
    c = countdown(3)
    assert list(c) == [3, 2, 1]
    assert list(reversed(c)) == [1, 2, 3]
    assert 2 in c and 5 not in c
