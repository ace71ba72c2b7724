import pytest
from solution import make


def test_a_bag_is_mutable_so_unhashable():
    with pytest.raises(TypeError):
        hash(make())
