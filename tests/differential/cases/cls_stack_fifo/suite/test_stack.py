import pytest
from solution import Stack


def test_last_in_first_out():
    s = Stack()
    for x in (1, 2, 3):
        s.push(x)
    assert [s.pop(), s.pop(), s.pop()] == [3, 2, 1]


def test_peek_does_not_remove():
    s = Stack()
    s.push("a")
    assert s.peek() == "a"
    assert s.size() == 1


def test_pop_on_empty():
    with pytest.raises(IndexError):
        Stack().pop()
