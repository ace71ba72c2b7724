"""The example repository (examples/review), reviewed as a new user would: through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.review.conftest import EXAMPLE
from tests.review.repos import state

pytestmark = pytest.mark.docker


def review(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "verifier", "review", str(repo), "--base", "main", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def by_class(ev: dict[str, Any], cls: str) -> list[str]:
    return [t["test_id"] for t in ev["tests"] if t["classification"] == cls]


def test_the_fix_shows_its_new_test_fixed_and_is_ok(sandbox_image: str, example_repo: Path) -> None:
    before = state(example_repo)
    code, ev = review(example_repo, "--head", "fix-adjacent-ranges")
    assert code == 0 and ev["ok"]
    assert by_class(ev, "fixed") == ["tests/test_sets.py::test_normalize_merges_adjacent_ranges"]
    fixed = next(t for t in ev["tests"] if t["classification"] == "fixed")
    assert fixed["provenance"] == "added"
    assert state(example_repo) == before
    # The same change as a patch file gives the same trees, so the same review.
    code, from_patch = review(example_repo, "--patch", str(EXAMPLE / "changes" / "01-fix-adjacent-ranges.patch"))
    assert code == 0 and from_patch["head"]["tree"] == ev["head"]["tree"]
    assert from_patch["patch_sha256"] and from_patch["head"]["commit"] is None
    assert by_class(from_patch, "fixed") == by_class(ev, "fixed")


def test_the_regression_is_broken_with_an_excerpt_and_exit_1(sandbox_image: str, example_repo: Path) -> None:
    code, ev = review(example_repo, "--head", "simpler-contains")
    assert code == 1 and not ev["ok"]
    assert by_class(ev, "broken") == [
        "tests/test_properties.py::test_contains_agrees_with_membership",
        "tests/test_sets.py::test_contains_both_ends",
    ]
    broken = next(t for t in ev["tests"] if t["test_id"].endswith("test_contains_both_ends"))
    assert "contains([(1, 3), (7, 9)], 3)" in broken["head"]["excerpt_untrusted"]
    prop = next(t for t in ev["tests"] if t["test_id"].endswith("test_contains_agrees_with_membership"))
    assert "Failing test case" in prop["head"]["excerpt_untrusted"]  # Hypothesis' minimal example


def test_the_test_editing_change_is_called_out_and_broken_with_tests_base(
    sandbox_image: str, example_repo: Path
) -> None:
    # The change alters an output and edits the tests to match: its own tests pass, but the base's
    # versions of the tests it edited fail on its code. A human decides: never "no regressions".
    code, ev = review(example_repo, "--head", "comma-space")
    assert code == 1 and not ev["ok"] and "2 rewritten" in ev["reason"]
    assert by_class(ev, "rewritten") == [
        "tests/test_parse.py::test_round_trip[1-3,5,8-13]",
        "tests/test_parse.py::test_to_text_writes_single_numbers_without_a_dash",
    ]
    assert by_class(ev, "edited_to_pass") == ["tests/test_parse.py::test_round_trip[1-3, 5, 8-13]"]
    assert ev["edited_judges"] == sorted(by_class(ev, "rewritten") + by_class(ev, "edited_to_pass"))
    assert by_class(ev, "fixed") == []  # a test the change edits never counts as fixed
    code, strict = review(example_repo, "--head", "comma-space", "--tests", "base")
    assert code == 1 and strict["tests_mode"] == "base"
    assert "tests/test_parse.py::test_to_text_writes_single_numbers_without_a_dash" in by_class(strict, "broken")


def test_the_dependency_change_installs_offline_and_runs(sandbox_image: str, example_repo: Path) -> None:
    code, ev = review(example_repo, "--head", "from-integers")
    assert code == 0 and ev["ok"]
    head = next(r for r in ev["runs"] if r["side"] == "head")
    base = next(r for r in ev["runs"] if r["side"] == "base")
    assert "more-itertools>=10" in head["environment"]["requirements"]
    assert any(p.startswith("more_itertools==") for p in head["environment"]["packages"])
    assert "more-itertools>=10" not in base["environment"]["requirements"]  # the base's code does not need it
    assert set(by_class(ev, "fixed")) == {
        "tests/test_from_integers.py::test_from_integers_groups_consecutive_values",
        "tests/test_from_integers.py::test_from_integers_of_nothing_is_empty",
    }


def test_the_same_review_twice_has_the_same_review_id(sandbox_image: str, example_repo: Path) -> None:
    _, a = review(example_repo, "--head", "fix-adjacent-ranges")
    _, b = review(example_repo, "--head", "fix-adjacent-ranges")
    assert a["review_id"] == b["review_id"]
    assert a["timings"] != b["timings"]  # timings vary; they are not part of the id
