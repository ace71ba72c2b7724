import pytest
from rangeset import parse, to_text


def test_parse_single_numbers_and_ranges():
    assert parse("1-3,7,10-12") == [(1, 3), (7, 7), (10, 12)]


def test_parse_ignores_spaces_and_empty_parts():
    assert parse(" 1-3 , ,7 ") == [(1, 3), (7, 7)]


def test_parse_rejects_backwards_ranges():
    with pytest.raises(ValueError, match="ends before it starts"):
        parse("5-1")


def test_to_text_writes_single_numbers_without_a_dash():
    assert to_text([(1, 3), (7, 7)]) == "1-3,7"


@pytest.mark.parametrize("text", ["1", "1-2", "1-3,5,8-13"])
def test_round_trip(text):
    assert to_text(parse(text)) == text
