"""Provenance from the source of the test's function: unchanged, added, edited, removed."""

from __future__ import annotations

from verifier.review.gitread import Entry
from verifier.review.provenance import Provenance, ProvenanceIndex, split_node_id
from verifier.review.split import Splitter

BASE = """
import pytest

def test_same():
    assert 1 + 1 == 2

def test_reformatted():
    assert 1+1==2  # a comment

@pytest.mark.parametrize("x", [1, 2])
def test_params(x):
    assert x

def test_body_edited():
    assert f(1) == 2

class TestGroup:
    def test_method(self):
        assert True

    def test_gone(self):
        assert True

def test_removed():
    pass
"""

HEAD = """
import pytest

def test_same():
    assert 1 + 1 == 2

def test_reformatted():
    assert 1 + 1 == 2

@pytest.mark.parametrize("x", [1, 2, 3])
def test_params(x):
    assert x

def test_body_edited():
    assert f(1) == 3

class TestGroup:
    def test_method(self):
        assert True

def test_new():
    pass
"""


def index() -> ProvenanceIndex:
    base = {"tests/test_a.py": Entry("100644", BASE.encode()), "tests/data.txt": Entry("100644", b"1")}
    head = {
        "tests/test_a.py": Entry("100644", HEAD.encode()),
        "tests/test_b.py": Entry("100644", b"def test_b(): pass\n"),
        "tests/data.txt": Entry("100644", b"2"),
    }
    return ProvenanceIndex(base, head)


def test_node_ids_map_to_qualified_names() -> None:
    assert split_node_id("tests/test_a.py::TestGroup::test_method") == ("tests/test_a.py", "TestGroup.test_method")
    assert split_node_id("t.py::test_p[a::b-[x]]") == ("t.py", "test_p")


def test_provenance_of_each_kind() -> None:
    idx = index()
    assert idx.of("tests/test_a.py::test_same") is Provenance.UNCHANGED
    assert idx.of("tests/test_a.py::test_reformatted") is Provenance.UNCHANGED  # formatting is not an edit
    assert idx.of("tests/test_a.py::test_params[1]") is Provenance.EDITED  # its parameter list changed
    assert idx.of("tests/test_a.py::test_body_edited") is Provenance.EDITED
    assert idx.of("tests/test_a.py::TestGroup::test_method") is Provenance.UNCHANGED
    assert idx.of("tests/test_a.py::test_new") is Provenance.ADDED
    assert idx.of("tests/test_b.py::test_b") is Provenance.ADDED
    assert idx.of("tests/test_a.py::test_removed") is Provenance.REMOVED
    # Not found as a function (a doctest, a generated test): the whole file decides.
    assert idx.of("tests/data.txt::line1") is Provenance.EDITED


def test_removed_tests_are_found_statically() -> None:
    removed = index().removed_tests(Splitter())
    assert [i for i, _ in removed] == ["tests/test_a.py::TestGroup::test_gone", "tests/test_a.py::test_removed"]
