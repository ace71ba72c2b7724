"""Provenance from the source of the test's function: unchanged, added, edited, removed."""

from __future__ import annotations

from verifier.review.gitread import Entry
from verifier.review.provenance import Definition, Provenance, ProvenanceIndex, split_node_id

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


def index(data_changes: bool = False) -> ProvenanceIndex:
    base = {"tests/test_a.py": Entry("100644", BASE.encode()), "tests/data.txt": Entry("100644", b"1")}
    head = {
        "tests/test_a.py": Entry("100644", HEAD.encode()),
        "tests/test_b.py": Entry("100644", b"def test_b(): pass\n"),
        "tests/data.txt": Entry("100644", b"2" if data_changes else b"1"),
        "docs/guide.txt": Entry("100644", b">>> 1"),
    }
    base["docs/guide.txt"] = Entry("100644", b">>> 2")
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
    assert idx.of("docs/guide.txt::line1") is Provenance.EDITED
    # A data file beside the tests can change what any of them does: all of them are edited.
    assert index(data_changes=True).of("tests/test_a.py::test_same") is Provenance.EDITED


def test_removed_tests_are_found_statically() -> None:
    removed = index().removed_tests()
    assert [i for i, _ in removed] == ["tests/test_a.py::TestGroup::test_gone", "tests/test_a.py::test_removed"]


# --- Section 1 of issue 23: what a test can see is part of its judge --------------------------

CHECKS = """
from rangeset import contains

def test_inside():
    assert contains([(1, 5)], 3)

def test_outside():
    assert not contains([(1, 5)], 7)
"""


def pair(base: dict[str, str], head: dict[str, str]) -> ProvenanceIndex:
    return ProvenanceIndex(
        {p: Entry("100644", t.encode()) for p, t in base.items()},
        {p: Entry("100644", t.encode()) for p, t in head.items()},
    )


def test_a_module_level_wrapper_is_an_edit_of_every_test_in_the_module() -> None:
    # The attack: a change breaks contains() and hides it behind a module-level wrapper; no test
    # function changes.
    wrapped = CHECKS.replace(
        "from rangeset import contains\n",
        "from rangeset import contains as _contains\n\ndef contains(r, x):\n    return _contains(r, x) or x == 3\n",
    )
    idx = pair({"tests/test_c.py": CHECKS}, {"tests/test_c.py": wrapped})
    prov, why = idx.explain("tests/test_c.py::test_inside")
    assert prov is Provenance.EDITED and "outside its test functions" in why
    assert idx.judge_paths() == ("tests/test_c.py",)


def test_adding_a_test_function_edits_no_other_test() -> None:
    idx = pair({"tests/test_c.py": CHECKS}, {"tests/test_c.py": CHECKS + "\ndef test_new():\n    pass\n"})
    assert idx.of("tests/test_c.py::test_inside") is Provenance.UNCHANGED
    assert idx.of("tests/test_c.py::test_new") is Provenance.ADDED
    assert idx.judge_paths() is None  # nothing of the base's tests changed: no base-version runs


def test_ways_to_disable_or_rebind_a_test_are_edits() -> None:
    for hostile in (
        "\ntest_outside = test_inside\n",  # rebinding a test name
        "\ndel test_outside\n",  # deleting it at import
        "\nimport pytest\npytestmark = pytest.mark.skip\n",  # skipping the module
        "\n__test__ = False\n",
    ):
        idx = pair({"tests/test_c.py": CHECKS}, {"tests/test_c.py": CHECKS + hostile})
        assert idx.of("tests/test_c.py::test_outside") is Provenance.EDITED, hostile
        assert idx.judge_paths() == ("tests/test_c.py",), hostile


def test_a_conftest_reaches_only_the_tests_below_it() -> None:
    base = {"tests/a/test_a.py": CHECKS, "tests/b/test_b.py": CHECKS}
    head = {**base, "tests/a/conftest.py": "import rangeset\nrangeset.contains = lambda r, x: True\n"}
    idx = pair(base, head)
    assert idx.of("tests/a/test_a.py::test_inside") is Provenance.EDITED
    assert idx.of("tests/b/test_b.py::test_inside") is Provenance.UNCHANGED
    assert idx.judge_paths() == ("tests/a/test_a.py",)
    # The pytest configuration reaches every test: all of the base's tests are judged.
    config = pair(base, {**base, "pytest.ini": "[pytest]\npython_functions = nothing_\n"})
    assert config.of("tests/b/test_b.py::test_inside") is Provenance.EDITED
    assert config.judge_paths() == ()


def test_an_inherited_test_is_its_defining_methods_not_its_files() -> None:
    mixin = "class Checks:\n    def test_one(self):\n        assert 1\n\n    def test_two(self):\n        assert 2\n"
    user = "from tests.test_base import Checks\n\nclass TestA(Checks):\n    pass\n"
    user_head = user + "\nclass TestB(Checks):\n    pass\n"  # a new class beside it
    base = {"tests/test_base.py": mixin, "tests/test_user.py": user}
    head = {"tests/test_base.py": mixin.replace("assert 2", "assert 2 or True"), "tests/test_user.py": user_head}
    idx = pair(base, head)
    # Where pytest says the function is defined (item.location): the mixin's file and line.
    one, two = Definition("tests/test_base.py", 2), Definition("tests/test_base.py", 5)
    assert idx.of("tests/test_user.py::TestA::test_one", one) is Provenance.UNCHANGED
    assert idx.of("tests/test_user.py::TestA::test_two", two) is Provenance.EDITED
    assert idx.of("tests/test_user.py::TestB::test_one", one) is Provenance.ADDED  # a new test, of an old function
    # The user module imports the touched one: its tests are judged by their base versions too.
    assert idx.judge_paths() == ("tests/test_base.py", "tests/test_user.py")
