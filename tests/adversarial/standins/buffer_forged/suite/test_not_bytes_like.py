import hashlib

import pytest

import solution


def test_packed_has_no_buffer():
    with pytest.raises(TypeError):
        memoryview(solution.packed())


def test_numbers_have_no_buffer():
    with pytest.raises(TypeError):
        memoryview(solution.numbers())


def test_view_does_not_concatenate():
    with pytest.raises(TypeError):
        b"" + solution.view()


def test_blob_is_not_hashable_data():
    with pytest.raises(TypeError):
        hashlib.sha256(solution.blob())


def test_kept_has_no_buffer():
    with pytest.raises(TypeError):
        memoryview(solution.kept())


def test_chunk_has_no_buffer():
    with pytest.raises(TypeError):
        memoryview(next(solution.chunks()))


def test_module_buffer_has_none():
    with pytest.raises(TypeError):
        memoryview(solution.BUFFER)
