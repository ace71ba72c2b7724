import pytest
from solution import double


@pytest.mark.parametrize("x", range(8))
def test_double(x):
    assert double(x) == 2 * x
