import pytest
from solution import Bag


def test_len_and_truth():
    b = Bag()
    assert len(b) == 0 and not b
    b.add("x")
    b.add("x")
    assert len(b) == 2 and b


def test_contains_and_count_by_item():
    b = Bag(["a", "b", "a"])
    assert "a" in b and "z" not in b
    assert b["a"] == 2
    assert b["z"] == 0


def test_set_and_delete_items():
    b = Bag(["a"])
    b["q"] = 3
    del b["a"]
    assert sorted(b) == ["q", "q", "q"]
    with pytest.raises(KeyError):
        del b["a"]
