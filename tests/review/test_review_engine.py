"""`review()` against the real engine: every class, flaky tests, runs that die early, the tests
mode, caching of environments, the markdown cap and SARIF validity on real evidence."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest

from tests.review.repos import add_branch, make_repo, state
from tests.review.test_reports import assert_valid_sarif
from verifier.limits import Limits
from verifier.review import REVIEW_LIMITS, ReviewEvidence, ReviewRequest, TestClass, review
from verifier.review.deps import DependencySpec
from verifier.review.reports import markdown
from verifier.review.review_evidence import Outcome
from verifier.runner.review_protocol import PROTOCOL
from verifier.sandbox.environment import ENV_REPO, LABEL_ENV, spec_digest

pytestmark = pytest.mark.docker

T = "tests/test_zoo.py::"


def classes(ev: ReviewEvidence) -> dict[str, str]:
    return {r.test_id: r.classification.value for r in ev.tests}


def test_every_class_on_the_real_engine(zoo_review: ReviewEvidence) -> None:
    assert classes(zoo_review) == {
        T + "test_double_small": "still_passing",
        T + "test_double_five": "broken",
        T + "test_half": "fixed",
        T + "test_half_odd": "fixed",  # added by the change: reproduces the bug on the base
        T + "test_new_feature_passes": "added",
        T + "test_known_bug": "still_failing",
        T + "test_uses_broken_fixture": "error",
        T + "test_skipped": "skipped",
        T + "test_flaky": "flaky",
        T + "test_legacy_removed": "removed",
        T + "test_half_zero": "edited_to_pass",  # the change edited its own judge; its base version still passes
        T + "test_greet": "rewritten",  # edited to match a new output: its base version fails on the head
    }
    assert not zoo_review.ok and zoo_review.reason.startswith(
        "not ok: 1 broken (passed on base, not on head), 1 rewritten"
    )
    assert zoo_review.edited_judges == [T + "test_greet", T + "test_half_zero"]
    assert zoo_review.isolation == "in-process" and zoo_review.tests_mode == "head"
    collected = {r.side: r.collected for r in zoo_review.runs if r.complete}
    # The change's tests on both sides; the base's own test file on both sides (it was edited).
    assert collected == {"base": 11, "head": 11, "base_tests_on_base": 10, "base_tests_on_head": 10}
    greet = next(r for r in zoo_review.tests if r.test_id == T + "test_greet")
    assert greet.base_version is not None and greet.base_version.on_head.outcome is Outcome.FAILED
    broken = next(r for r in zoo_review.tests if r.classification is TestClass.BROKEN)
    assert broken.head is not None and "assert 11 == 10" in broken.head.excerpt_untrusted


def test_a_flaky_test_is_found_by_the_rerun(zoo_review: ReviewEvidence) -> None:
    flaky = next(r for r in zoo_review.tests if r.classification is TestClass.FLAKY)
    assert flaky.base is not None and flaky.head is not None
    assert (flaky.head.outcome, flaky.head.rerun) == (Outcome.FAILED, Outcome.PASSED)
    assert not flaky.blocking
    # Only failing tests are rerun, once each, in a fresh worker on a fresh copy of the tree.
    head_run = next(r for r in zoo_review.runs if r.side == "head")
    assert head_run.reran == 4  # broken, still failing, error, flaky


def test_tests_base_judges_the_change_with_the_base_tests(sandbox_image: str, zoo_repo: Path) -> None:
    ev = review(ReviewRequest(repo=zoo_repo, base="main", head="change", tests="base", image=sandbox_image))
    got = classes(ev)
    assert got[T + "test_greet"] == "broken"  # the base's version of the edited test
    assert got[T + "test_legacy_removed"] == "still_passing"  # the change cannot drop it either
    assert T + "test_half_odd" not in got  # lives in a file the base has: the base's file runs
    assert ev.tests_mode == "base" and {r.tests_from for r in ev.runs} == {"base+added"}
    assert not ev.edited_judges


def test_real_reports_are_valid(zoo_review: ReviewEvidence) -> None:
    doc = assert_valid_sarif(zoo_review)
    rules = sorted(r["ruleId"] for r in doc["runs"][0]["results"])  # type: ignore[index]
    assert rules == ["broken", "error", "flaky", "rewritten", "still_failing"]
    text = markdown.render(zoo_review)
    assert "This change edits its own judge" in text and "assert 11 == 10" in text


@pytest.fixture(scope="module")
def dying_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tests = "from lib import step\n\n" + "".join(
        f"\ndef test_{i}():\n    assert step({i}) == {i}\n\n" for i in range(1, 6)
    )
    base = {"lib.py": "def step(i):\n    return i\n", "tests/test_steps.py": tests}
    repo = make_repo(tmp_path_factory.mktemp("dying") / "repo", base)
    add_branch(
        repo, "exit0", {"lib.py": "import os\n\ndef step(i):\n    if i == 3:\n        os._exit(0)\n    return i\n"}
    )
    add_branch(
        repo,
        "segv",
        {"lib.py": "import ctypes\n\ndef step(i):\n    if i == 3:\n        ctypes.string_at(0)\n    return i\n"},
    )
    add_branch(
        repo,
        "hang",
        {"lib.py": "import time\n\ndef step(i):\n    if i == 3:\n        time.sleep(3600)\n    return i\n"},
    )
    return repo


@pytest.mark.parametrize(
    ("branch", "words", "limits"),
    [
        ("exit0", "exited with code 0", REVIEW_LIMITS),
        ("segv", "killed by signal 11", REVIEW_LIMITS),
        ("hang", "time limit", Limits(**{**REVIEW_LIMITS.model_dump(), "timeout_s": 15.0})),
    ],
)
def test_a_run_that_dies_half_way_leaves_its_tests_missing(
    sandbox_image: str, dying_repo: Path, branch: str, words: str, limits: Limits
) -> None:
    ev = review(ReviewRequest(repo=dying_repo, base="main", head=branch, image=sandbox_image, limits=limits))
    head = next(r for r in ev.runs if r.side == "head")
    assert not ev.ok and not head.complete and words in head.stopped, head.stopped
    got = classes(ev)
    assert [got[f"tests/test_steps.py::test_{i}"] for i in range(1, 6)] == ["still_passing"] * 2 + ["missing"] * 3
    assert ev.reason.startswith("the head run did not complete")


def _env_images(client: docker.DockerClient) -> set[str]:
    return {img["Id"] for img in client.api.images(filters={"label": LABEL_ENV})}


def test_a_second_review_with_the_same_dependencies_builds_nothing(
    sandbox_image: str, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    # A requirement no earlier run can have cached: the first review must build, the second must not.
    unique = f"more-itertools>=10,!=0.0.{secrets.randbelow(10**9)}"
    pyproject = f'[project]\nname = "uses-dep"\nversion = "1"\ndependencies = ["{unique}"]\n'
    test = (
        "import importlib.metadata\n\nimport more_itertools\n\n\n"
        "def test_dep():\n"
        "    assert list(more_itertools.chunked([1, 2, 3], 2)) == [[1, 2], [3]]\n\n\n"
        "def test_the_project_itself_is_installed_from_the_tree():\n"
        "    assert importlib.metadata.version('uses-dep') == '1'\n"
    )
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject, "tests/test_dep.py": test})
    request = ReviewRequest(repo=repo, base="main", head="main", image=sandbox_image)
    sandbox_id = docker_client.api.inspect_image(sandbox_image)["Id"]
    tag = f"{ENV_REPO}:{spec_digest(DependencySpec((unique,)), sandbox_id)[:16]}"
    try:
        first = review(request)
        envs = {r.environment.image_id for r in first.runs}
        assert first.ok and all(r.environment.built for r in first.runs) and len(envs) == 1
        assert docker_client.api.inspect_image(tag)["Id"] in envs
        assert any(p.startswith("more_itertools==") for p in first.runs[0].environment.packages)
        images_before = _env_images(docker_client)
        second = review(request)
        assert second.ok and not any(r.environment.built for r in second.runs)
        assert {r.environment.image_id for r in second.runs} == envs
        assert _env_images(docker_client) == images_before  # no image was added
        assert second.review_id == first.review_id
    finally:
        try:
            docker_client.api.remove_image(tag, force=True)
        except docker.errors.ImageNotFound:
            pass


def test_the_markdown_comment_stays_under_the_cap_for_a_large_failing_suite(sandbox_image: str, tmp_path: Path) -> None:
    n = 1200
    tests = (
        "import pytest\nfrom lib import value\n\n"
        f"@pytest.mark.parametrize('i', range({n}))\n"
        "def test_value_" + "x" * 60 + "(i):\n    assert value(i) == i, 'long message ' * 50\n"
    )
    repo = make_repo(tmp_path / "repo", {"lib.py": "def value(i):\n    return i\n", "tests/test_many.py": tests})
    add_branch(repo, "change", {"lib.py": "def value(i):\n    return -i - 1\n"})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    assert ev.counts.broken == n
    text = markdown.render(ev)
    assert len(text) <= markdown.MAX_CHARS
    assert "more (the JSON and SARIF reports list every test)" in text
    assert len(json.loads(ev.to_json())["tests"]) == n
    assert_valid_sarif(ev)


def test_a_review_leaves_the_repository_as_it_was(sandbox_image: str, zoo_repo: Path) -> None:
    (zoo_repo / "untracked.txt").write_text("x")
    (zoo_repo / "zoo" / "__init__.py").write_text("dirty working tree\n")
    try:
        before: Any = state(zoo_repo)
        review(ReviewRequest(repo=zoo_repo, base="main", head="change", image=sandbox_image))
        assert state(zoo_repo) == before
    finally:
        (zoo_repo / "untracked.txt").unlink()
        from tests.review.repos import git

        git(zoo_repo, "checkout", "-q", "--", "zoo/__init__.py")


CHANNEL_TESTS_BASE = """
import os


def test_cannot_reach_the_supervisor():
    sup = os.getppid()  # the supervisor: it holds the nonce and the result channel
    for path in (f"/proc/{sup}/mem", f"/proc/{sup}/environ"):
        try:
            open(path, "rb").read(1)
        except PermissionError:
            continue
        raise AssertionError(f"{path} was readable")
    try:
        os.listdir(f"/proc/{sup}/fd")
    except PermissionError:
        return
    raise AssertionError("the supervisor's file descriptors were visible")


def test_forges_a_result():
    pass
"""

FORGERY = """
    line = 'VERIFIER-REVIEW 00000000000000000000000000000000 {"protocol": PROTOCOL, "runs": []}'
    print(line)
    print("1 passed in 0.01s")
    with open("/proc/1/fd/1", "w") as out:  # the container's stdout, through PID 1
        out.write(line + chr(10) + line)  # a whole line, then one left open
    assert False, "fails, whatever it printed"
""".replace("PROTOCOL", str(PROTOCOL))  # a result of the current version: only the nonce it lacks gives it away


def test_tests_cannot_reach_the_result_channel_or_forge_by_printing(sandbox_image: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_channel.py": CHANNEL_TESTS_BASE})
    add_branch(repo, "change", {"tests/test_channel.py": CHANNEL_TESTS_BASE.replace("    pass\n", FORGERY)})
    ev = review(ReviewRequest(repo=repo, base="main", head="change", image=sandbox_image))
    got = classes(ev)
    assert got["tests/test_channel.py::test_cannot_reach_the_supervisor"] == "still_passing"
    # The head's version runs on both sides (head mode): it fails on both, whatever it printed or
    # wrote to the container's stdout (a whole forged line, then one left open), and the real
    # result line is still found.
    assert got["tests/test_channel.py::test_forges_a_result"] == "still_failing"
    row = next(r for r in ev.tests if r.test_id.endswith("test_forges_a_result"))
    assert row.head is not None and row.head.outcome is Outcome.FAILED and row.head.rerun is Outcome.FAILED
    assert all(r.complete for r in ev.runs)
