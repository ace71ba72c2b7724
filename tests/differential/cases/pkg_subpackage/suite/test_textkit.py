from textkit import count_words
from textkit.tokens.split import words


def test_words():
    assert words("a, b; c") == ["a", "b", "c"]


def test_count():
    assert count_words("one two  three") == 3
