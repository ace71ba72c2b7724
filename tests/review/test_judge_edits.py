"""Issue 23, section 1: a change that breaks the code must not pass by editing its judges.

Each branch below breaks ``contains()`` (the example's "simpler-contains" bug: a range's end is
left out) and then edits, outside the test functions' bodies or by removing them, what judges
it. With the default ``--tests head`` the change's own tests judge it, so the review runs the
base's own versions of the touched tests on both sides' code: every one of these must end
not ok, exit 1, never "no regressions". Honest changes to the tests stay ok.

The reviews run once, side by side, in one module fixture (real engine, real containers).
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.review.conftest import EXAMPLE
from tests.review.repos import add_branch, git
from verifier.review import ReviewEvidence, ReviewRequest, review

#: One run of the reviews (the module fixture), so one worker runs the module.
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("judge-edits")]

SETS = (EXAMPLE / "library" / "tests" / "test_sets.py").read_text()
PROPS = (EXAMPLE / "library" / "tests" / "test_properties.py").read_text()
CORE = (EXAMPLE / "library" / "src" / "rangeset" / "core.py").read_text()
BROKEN = CORE.replace("ranges[i][0] <= n <= ranges[i][1]", "ranges[i][0] <= n < ranges[i][1]")
assert BROKEN != CORE
CODE = {"src/rangeset/core.py": BROKEN}

WRAPPER = (
    "from rangeset import contains as _contains\n\n\n"
    "def contains(ranges, n):\n"
    "    return _contains(ranges, n) or any(s <= n <= e for s, e in ranges)\n"
)
FIXED_CONTAINS = "lambda ranges, n: any(s <= n <= e for s, e in ranges)"

#: branch -> (files it writes on top of the broken code, a one-line note of what it attacks)
HOSTILE: dict[str, tuple[dict[str, str | None], str]] = {
    "wrapper": (
        {
            "tests/test_sets.py": SETS.replace("from rangeset import contains, ", WRAPPER + "from rangeset import "),
            "tests/test_properties.py": PROPS.replace(
                "from rangeset import contains, ", WRAPPER + "from rangeset import "
            ),
        },
        "a module-level wrapper hides the bug; no test function changes",
    ),
    "delete": (
        {
            "tests/test_sets.py": SETS[: SETS.index("def test_contains_both_ends")],
            "tests/test_properties.py": PROPS[: PROPS.index("@given(ranges, st.integers")]
            + PROPS[PROPS.index("@given(ranges)\ndef test_normalize") :],
        },
        "deletes the two tests that catch the bug",
    ),
    "delete-file": (
        {"tests/test_sets.py": None, "tests/test_properties.py": None},
        "deletes the two test files that catch the bug",
    ),
    "conftest-patch": (
        {"tests/conftest.py": f"import rangeset\n\nrangeset.contains = {FIXED_CONTAINS}\n"},
        "a new conftest.py rebinds the function under test before the tests import it",
    ),
    "skip-module": (
        {
            "tests/test_sets.py": "import pytest\n\npytestmark = pytest.mark.skip\n" + SETS,
            "tests/test_properties.py": "import pytest\n\npytestmark = pytest.mark.skip\n" + PROPS,
        },
        "a module-level skip mark disables the tests",
    ),
    "rebind": (
        {
            "tests/test_sets.py": SETS + "\n\ntest_contains_both_ends = test_total_counts_each_integer_once\n",
            "tests/test_properties.py": PROPS
            + "\n\ntest_contains_agrees_with_membership = test_normalize_is_idempotent\n",
        },
        "rebinds the catching tests' names to other tests",
    ),
    "config-deselect": (
        {"pyproject.toml": (EXAMPLE / "library" / "pyproject.toml").read_text() + "addopts = \"-k 'not contains'\"\n"},
        "the pytest configuration deselects the catching tests",
    ),
    "new-module-patches": (
        {
            "tests/test_aaa_setup.py": f"import rangeset\n\nrangeset.contains = {FIXED_CONTAINS}\n\n\n"
            "def test_ok():\n    pass\n"
        },
        "a new test module patches the function under test at import, for every module after it",
    ),
    "new-test-pollutes": (
        {
            "tests/test_aaa_setup.py": "import rangeset\n\n\ndef test_setup():\n"
            "    def fixed(ranges, n):\n        return any(s <= n <= e for s, e in ranges)\n\n"
            "    rangeset.contains.__code__ = fixed.__code__\n"
        },
        "a new test rewrites the function under test in place and never restores it",
    ),
    "conftest-errors": (
        {
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _broken():\n"
            "    raise RuntimeError('fixture broken on purpose')\n"
        },
        "a conftest errors every test on both sides, so each error looks pre-existing",
    ),
    "no-collect": (
        {
            "tests/test_sets.py": "raise ImportError('not today')\n" + SETS,
            "tests/test_properties.py": "raise ImportError('not today')\n" + PROPS,
        },
        "the catching modules fail to collect on both sides",
    ),
}

INIT = (EXAMPLE / "library" / "src" / "rangeset" / "__init__.py").read_text()

#: Code that, imported by the tests, rewrites what pytest reports (the tests are untouched).
TAMPER: dict[str, tuple[str, str]] = {
    "forge-report": (
        "import _pytest.reports as _r\n"
        "_real = _r.TestReport.from_item_and_call.__func__\n"
        "def _forged(cls, item, call):\n"
        "    rep = _real(cls, item, call)\n"
        "    rep.outcome, rep.longrepr = 'passed', None\n"
        "    return rep\n"
        "_r.TestReport.from_item_and_call = classmethod(_forged)\n",
        "pytest's report constructor says passed",
    ),
    "forge-plugin": (
        "import gc, pytest\n"
        "class _Forger:\n"
        "    @pytest.hookimpl(hookwrapper=True)\n"
        "    def pytest_runtest_makereport(self, item, call):\n"
        "        outcome = yield\n"
        "        rep = outcome.get_result()\n"
        "        rep.outcome, rep.longrepr = 'passed', None\n"
        "for _o in gc.get_objects():\n"
        "    if type(_o).__name__ == 'Config' and hasattr(_o, 'pluginmanager'):\n"
        "        _o.pluginmanager.register(_Forger())\n",
        "a plugin object registered from the code under test flips every outcome",
    ),
    "forge-reporter": (
        "import sys\n"
        "for _m in list(sys.modules.values()):\n"
        "    if hasattr(_m, 'ReviewReporter') and hasattr(_m, '_outcome'):\n"
        "        _real = _m._outcome\n"
        "        _m._outcome = lambda reports: ('passed', 'call', None)\n",
        "the reporting plugin's own outcome function says passed",
    ),
}

#: Honest changes to the tests (the code is correct): they stay ok.
HONEST: dict[str, tuple[dict[str, str | None], str]] = {
    "strengthen": (
        {
            "tests/test_sets.py": SETS.replace(
                "assert contains(ranges, 1) and contains(ranges, 3) and contains(ranges, 9)",
                "assert all(contains(ranges, n) for n in (1, 2, 3, 7, 8, 9))",
            )
        },
        "an edited test that checks more",
    ),
    "new-test-file": (
        {
            "tests/test_more.py": "from rangeset import contains\n\n\n"
            "def test_single():\n    assert contains([(2, 2)], 2)\n"
        },
        "a new test module, as most changes add",
    ),
    "helper": (
        {"tests/test_sets.py": SETS.replace("from rangeset import", "import math\n\nfrom rangeset import")},
        "an added import: every test of the module is edited, and their base versions still pass",
    ),
}


@pytest.fixture(scope="module")
def reviews(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> dict[str, ReviewEvidence]:
    repo = tmp_path_factory.mktemp("judges") / "rangeset"
    shutil.copytree(EXAMPLE / "library", repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for name, (files, _) in HOSTILE.items():
        add_branch(repo, name, {**CODE, **files})
    for name, (files, _) in HONEST.items():
        add_branch(repo, name, files)
    for name, (code, _) in TAMPER.items():
        add_branch(repo, name, {**CODE, "src/rangeset/__init__.py": INIT + "\n" + code})
    names = [*HOSTILE, *HONEST, *TAMPER]
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = pool.map(lambda n: review(ReviewRequest(repo=repo, base="main", head=n, image=sandbox_image)), names)
        return dict(zip(names, done, strict=True))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_change_that_edits_its_judges_is_not_ok(reviews: dict[str, ReviewEvidence], name: str) -> None:
    ev = reviews[name]
    note = HOSTILE[name][1]
    assert not ev.ok, f"{name} ({note}): {ev.reason}"
    assert "no regressions" not in ev.reason
    blocking = {t.test_id: t for t in ev.tests if t.blocking}
    assert blocking, note
    if name not in ("conftest-errors", "no-collect"):
        # The base's own versions of the catching tests fail on the head code: rewritten.
        rewritten = {t for t, row in blocking.items() if row.classification == "rewritten"}
        assert {
            "tests/test_sets.py::test_contains_both_ends",
            "tests/test_properties.py::test_contains_agrees_with_membership",
        } <= rewritten, (note, ev.reason, sorted(blocking))
    assert {r.side for r in ev.runs} == {"base", "head", "base_tests_on_base", "base_tests_on_head"}


def test_an_error_the_change_brings_is_never_pre_existing(reviews: dict[str, ReviewEvidence]) -> None:
    ev = reviews["conftest-errors"]
    rows = {t.test_id: t for t in ev.tests}
    row = rows["tests/test_sets.py::test_total_counts_each_integer_once"]
    assert row.head is not None and row.head.outcome == "error" and row.base is not None
    assert row.base.outcome == "error" and row.blocking and "not pre-existing" in row.note


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_edits_to_the_tests_stay_ok(reviews: dict[str, ReviewEvidence], name: str) -> None:
    ev = reviews[name]
    assert ev.ok, f"{name} ({HONEST[name][1]}): {ev.reason}"
    # The base's tests ran on both sides too, and every one of them still passes on the head code.
    assert {r.side for r in ev.runs} == {"base", "head", "base_tests_on_base", "base_tests_on_head"}
    old = [t for t in ev.tests if t.base_version is not None]
    assert len(old) >= 10 and all(t.base_version.on_head.outcome == "passed" for t in old)  # type: ignore[union-attr]
    assert "the base's own tests still pass on the head code" in ev.reason
    if name != "new-test-file":
        assert "the change edits or removes" in ev.reason


@pytest.mark.parametrize("name", list(TAMPER))
def test_code_that_rewrites_the_reporting_path_ends_the_run_as_tampered(
    reviews: dict[str, ReviewEvidence], name: str
) -> None:
    ev = reviews[name]
    assert not ev.ok and "no regressions" not in ev.reason, TAMPER[name][1]
    head = next(r for r in ev.runs if r.side == "head")
    assert head.tampered and not head.complete, (TAMPER[name][1], head.stopped)
    assert "reporting path" in ev.reason
    # The same code path on the base side is untouched: no false alarm there.
    assert not next(r for r in ev.runs if r.side == "base").tampered


def test_honest_reviews_are_never_tampered(reviews: dict[str, ReviewEvidence]) -> None:
    for name in [*HOSTILE, *HONEST]:
        assert not any(r.tampered for r in reviews[name].runs), name


def test_the_base_trees_own_run_is_kept_and_reused(reviews: dict[str, ReviewEvidence]) -> None:
    # Every branch here has the same base: its own run is read from the host's cache after the first.
    runs = [r for ev in reviews.values() for r in ev.runs if r.side == "base_tests_on_base"]
    assert any(r.cached for r in runs)
    assert len({(r.tree, r.environment.image_id, r.collected) for r in runs}) == 1
