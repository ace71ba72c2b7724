import pytest
from solution import Resource


def test_with_block():
    with Resource("db") as r:
        assert r.read() == "data from db"
    assert r.closed


def test_closed_after_an_error():
    r = Resource("db")
    with pytest.raises(KeyError), r:
        raise KeyError("x")
    assert r.closed
