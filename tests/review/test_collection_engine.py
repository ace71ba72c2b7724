"""pytest's own idea of a test, end to end on the real engine: a testpaths file and a rerun that
reads the same configuration as the first session; a unittest test.py named with --test-path
(through the CLI, with --pytest-args)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.review.repos import make_repo
from verifier.review import ReviewRequest, review

pytestmark = pytest.mark.docker

UNITTEST = """import unittest

from mylib import f


class Tests(unittest.TestCase):
    def test_f(self):
        self.assertEqual(f(), 1)

    def test_slow(self):
        self.assertEqual(f() + 0, 1)
"""


def classes(ev: object) -> dict[str, str]:
    return {r.test_id: r.classification.value for r in ev.tests}  # type: ignore[attr-defined]


def test_a_unittest_test_py_named_with_test_path_through_the_cli(sandbox_image: str, tmp_path: Path) -> None:
    """Attacks: a test.py run by unittest, no pytest configuration, had no way in; --pytest-args reaches both runs."""
    base = {"mylib.py": "def f():\n    return 0  # the bug\n", "test.py": UNITTEST}
    root = make_repo(tmp_path / "r", base, {"mylib.py": "def f():\n    return 1\n"})
    args = ["--base", "main", "--head", "change", "-f", "json", "--no-build", "--test-path", "test.py"]
    done = subprocess.run(
        [sys.executable, "-m", "verifier", "review", str(root), *args, "--pytest-args", "-k 'not slow' -W error"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    ev = json.loads(done.stdout)
    assert {r["test_id"]: r["classification"] for r in ev["tests"]} == {"test.py::Tests::test_f": "fixed"}
    assert ev["pytest"]["paths"] == ["test.py"] and ev["pytest"]["args"][-3:] == ["not slow", "-W", "error"]
    assert ev["reason"] == "no regressions: 1 tests judged, 1 fixed, 0 still passing"


def test_a_testpaths_file_and_a_rerun_that_reads_the_first_session_s_configuration(
    sandbox_image: str, tmp_path: Path
) -> None:
    """Attacks: `testpaths = test.py` was refused as "no tests". And a failing test's rerun is
    given its node id, so pytest looked for its configuration from the test's folder: a nested
    tox.ini without the root's `filterwarnings = error` made a regression pass on the rerun,
    "flaky", and the review ok."""
    base = {
        "pytest.ini": "[pytest]\ntestpaths = test.py tests/sub\nfilterwarnings = error\n",
        "tests/sub/tox.ini": "[pytest]\n",
        "tests/sub/test_lib.py": "from mylib import f\n\n\ndef test_warns_not():\n    assert f() == 1\n",
        "mylib.py": "def f():\n    return 1\n",
        "test.py": UNITTEST,
    }
    head = {"mylib.py": "import warnings\n\n\ndef f():\n    warnings.warn('old', DeprecationWarning)\n    return 1\n"}
    root = make_repo(tmp_path / "r", base, head)
    ev = review(ReviewRequest(repo=root, base="main", head="change", image=sandbox_image))
    assert set(classes(ev).values()) == {"broken"}
    assert sorted(classes(ev)) == [
        "test.py::Tests::test_f",
        "test.py::Tests::test_slow",
        "tests/sub/test_lib.py::test_warns_not",
    ]
    assert not ev.ok and ev.pytest.paths == ["test.py", "tests/sub"] and ev.pytest.args[:2] == ["-c", "pytest.ini"]


def test_names_that_are_not_utf8_and_text_with_lone_surrogates_still_make_a_report(
    sandbox_image: str, tmp_path: Path
) -> None:
    """Attacks: a test module whose name is not valid UTF-8, or a failure message holding a lone
    surrogate, ended the review with exit 2 and no report; and two such names must not be shown
    alike (replacing bad bytes with U+FFFD would make them one)."""
    e9, e8 = os.fsdecode(b"tests/test_\xe9.py"), os.fsdecode(b"tests/test_\xe8.py")
    base = {
        "lib.py": "def f():\n    return 1\n",
        "tests/test_lib.py": "from lib import f\n\n\ndef test_f():\n    assert f() == 1\n",
    }
    head = {
        "lib.py": "def f():\n    return 2\n",
        "tests/test_text.py": 'def test_s():\n    raise AssertionError("bad \\udce9 text")\n',
        e9: "def test_x():\n    assert False\n",
        e8: "def test_x():\n    pass\n",
    }
    root = make_repo(tmp_path / "r", base, head)
    out = tmp_path / "out"
    args = ["--base", "main", "--head", "change", "--no-build", "--out-dir", str(out)]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "verifier",
            "review",
            str(root),
            *args,
            *("-f", "json", "-f", "markdown", "-f", "junit", "-f", "sarif"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # not ok, with every report written
    ev = json.loads((out / "review.json").read_text(encoding="utf-8"))
    got = {r["test_id"]: r["classification"] for r in ev["tests"]}
    assert got["tests/test_lib.py::test_f"] == "broken"
    assert got['"tests/test_\\351.py::test_x"'] == "added" and got['"tests/test_\\350.py::test_x"'] == "added"
    assert got["tests/test_text.py::test_s"] == "added"
    assert '"tests/test_\\351.py::test_x"' in (out / "review.md").read_text(encoding="utf-8")
