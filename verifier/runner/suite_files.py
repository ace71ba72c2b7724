"""Which files of a suite are tests: the one rule, used by the host (verifier.suite) and by
the runner (its pytest configuration and the direct runner). Standard library only."""

from __future__ import annotations

#: pytest's `python_files` patterns for suites.
TEST_FILE_PATTERNS = ("test_*.py", "*_test.py")


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def pytest_ini() -> str:
    return "[pytest]\npython_files = " + " ".join(TEST_FILE_PATTERNS) + "\n"
