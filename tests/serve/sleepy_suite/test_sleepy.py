"""One test that waits for the candidate: a check that takes as long as the candidate sleeps."""

import solution


def test_value():
    assert solution.value() == 1
