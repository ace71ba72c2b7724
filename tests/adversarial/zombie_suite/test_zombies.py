"""Every test starts with no zombie of an earlier one: a zombie's name, pid and number would carry
state from test to test."""

import time

from solution import leave, look


def test_1_leave_a_note():
    assert leave(1) == 1


def test_2_no_note_is_left():
    time.sleep(0.2)  # the orphan has certainly ended by now
    assert look() == []
    assert leave(2) == 2


def test_3_no_note_is_left():
    time.sleep(0.2)
    assert look() == []
