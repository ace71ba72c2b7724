from rangeset import contains, normalize, parse, total


def test_normalize_sorts_and_merges_overlaps():
    assert normalize([(7, 9), (1, 3), (2, 4)]) == [(1, 4), (7, 9)]


def test_normalize_keeps_separate_ranges_apart():
    assert normalize([(1, 2), (5, 6)]) == [(1, 2), (5, 6)]


def test_total_counts_each_integer_once():
    assert total([(1, 3), (2, 5)]) == 5


def test_contains_both_ends():
    ranges = normalize(parse("1-3,7-9"))
    assert contains(ranges, 1) and contains(ranges, 3) and contains(ranges, 9)


def test_contains_gaps_and_outside():
    ranges = normalize(parse("1-3,7-9"))
    assert not any(contains(ranges, n) for n in (0, 4, 6, 10))
