import pytest
from solution import make


def test_records_do_not_order():
    with pytest.raises(TypeError):
        make(1) < make(2)


def test_records_do_not_compare_with_numbers():
    with pytest.raises(TypeError):
        sorted([make(1), make(2)])
