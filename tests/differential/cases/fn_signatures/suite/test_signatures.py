import pytest
from solution import describe, format_name, total


def test_keyword_only_arguments():
    assert format_name("Ada", "Lovelace") == "Ada Lovelace"
    assert format_name("Ada", "Lovelace", middle="King", upper=True) == "ADA KING LOVELACE"


def test_keyword_only_is_enforced():
    with pytest.raises(TypeError):
        format_name("Ada", "Lovelace", "King")


def test_varargs_and_kwargs():
    assert total(1, 2, 3) == 6
    assert total(start=10) == 10
    assert describe(b=2, a=1) == [("a", 1), ("b", 2)]
