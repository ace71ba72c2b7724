"""--pytest-args: pytest's selection, warning and reporting options pass; the rest is refused by name."""

from __future__ import annotations

import pytest

from verifier.errors import InvalidInput
from verifier.review.pytest_options import ALLOWED, REFUSED, check, parse, paths


@pytest.mark.parametrize(
    "text",
    [
        "-k 'not slow and not network'",
        "-m unit -W error::DeprecationWarning --tb=short -rA -vv",
        "--deselect tests/test_a.py::test_b --ignore=tests/legacy --strict-markers",
        "-kfast -Werror -q --durations 5 --doctest-modules --import-mode importlib",
        "",
    ],
)
def test_selection_warning_and_reporting_options_pass(text: str) -> None:
    assert list(parse(text)) == __import__("shlex").split(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("-p evil_plugin", "-p is refused: it would load a plugin"),
        ("-pno:randomly", "-p is refused"),
        ("--pyargs", "--pyargs is refused"),
        ("-c other.ini", "-c is refused: it changes which configuration"),
        ("--rootdir=/", "--rootdir is refused"),
        ("-o python_files=*.py", "-o is refused"),
        ("-x", "-x is refused: every collected test must run"),
        ("-vx", "-x is refused"),
        ("--maxfail=1", "--maxfail is refused"),
        ("--lf", "--lf is refused"),
        ("--co", "--co is refused: it runs no tests"),
        ("-n 4", "-n is refused: each side runs in one process"),
        ("--junitxml=out.xml", "--junitxml is refused"),
        ("--hypothesis-seed=1", "--hypothesis-seed is refused"),
        ("--cov=src", "--cov is not an option the review allows"),
        ("tests/test_a.py", "'tests/test_a.py' is not an option; give test files and folders with --test-path"),
        ("-k", "-k needs a value"),
        ("--strict-markers=yes", "--strict-markers takes no value"),
        ("-k 'unclosed", "--pytest-args: No closing quotation"),
    ],
)
def test_options_that_change_where_results_come_from_are_refused_by_name(text: str, words: str) -> None:
    with pytest.raises(InvalidInput, match=r"^--pytest-args: ") as info:
        parse(text)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_no_option_is_both_allowed_and_refused() -> None:
    assert not set(ALLOWED) & set(REFUSED)
    assert check(("-k", "x")) == ("-k", "x")


def test_paths_in_addopts_are_the_words_no_option_takes() -> None:
    assert paths(["-ra", "--strict-markers", "tests/unit", "-k", "not slow", "--tb", "short", "doc"]) == [
        "tests/unit",
        "doc",
    ]
    # An option the review does not know may take the next word (pytest-cov's --cov src): never a path.
    assert paths(["--cov", "src", "tests"]) == ["tests"]
    assert paths(["--cov=src", "tests", "-p", "xdist"]) == ["tests"]
