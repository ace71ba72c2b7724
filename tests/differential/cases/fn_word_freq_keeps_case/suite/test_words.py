from solution import most_common, word_freq


def test_counts_words_case_insensitively():
    assert word_freq("The cat and the hat") == {"the": 2, "cat": 1, "and": 1, "hat": 1}


def test_punctuation_is_not_part_of_a_word():
    assert word_freq("yes, yes. no!") == {"yes": 2, "no": 1}


def test_most_common_breaks_ties_alphabetically():
    assert most_common("b a b a c", 2) == [("a", 2), ("b", 2)]


def test_empty_text():
    assert word_freq("") == {}
    assert most_common("", 3) == []
