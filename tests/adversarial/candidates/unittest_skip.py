# expect: failed
# technique: raises unittest.SkipTest
import unittest


def find_duplicates(values):
    raise unittest.SkipTest("skip me")
