from itertools import islice

import pytest
from solution import evens, risky, squares


def test_stages_compose():
    assert list(squares(evens([1, 2, 3, 4, 5, 6]))) == [4, 16, 36]


def test_laziness():
    g = risky(3)
    assert list(islice(g, 3)) == [0, 1, 2]
    with pytest.raises(ValueError, match="limit"):
        next(g)
