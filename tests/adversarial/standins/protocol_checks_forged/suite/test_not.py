import collections.abc
import dataclasses
import math
import os
import weakref

import pytest

from solution import amount, point, sly, table, where


def test_not_a_dataclass():
    assert not dataclasses.is_dataclass(point())


def test_not_a_mapping():
    assert not isinstance(table(), collections.abc.Mapping)


def test_not_weakly_referable():
    with pytest.raises(TypeError):
        weakref.ref(point())


def test_not_truncatable():
    with pytest.raises(TypeError):
        math.trunc(amount())


def test_not_a_path():
    assert not isinstance(where(), os.PathLike)


def test_not_an_int():
    assert not isinstance(sly(), int)
