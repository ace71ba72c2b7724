# expect: failed
# technique: an exception message that imitates Hypothesis' "Falsifying example" lines, to plant its own minimal input
def find_duplicates(values):
    raise TypeError(
        "boom\nFalsifying example: test_matches_reference(\n    items=['PLANTED'],\n)\n"
        "Failing test case: test_unhashable_values_are_supported(items=['PLANTED'])"
    )
