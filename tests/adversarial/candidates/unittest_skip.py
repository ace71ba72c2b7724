# expect: failed
import unittest


def find_duplicates(values):
    raise unittest.SkipTest("skip me")
