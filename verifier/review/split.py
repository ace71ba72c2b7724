"""Which files of a tree are its tests, and the trees a review runs.

A tree splits into **tests** — files pytest would collect, every ``conftest.py``, everything
under a test folder (``tests/``, ``test/``, ``testing/`` or a configured ``testpaths``), and
the root files pytest reads its configuration from (``pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``...) — and **code** (everything else). A run's tree is one side's
code plus one side's tests, as SWE-bench applies a test patch to both sides of a change.
"""

from __future__ import annotations

import configparser
import fnmatch
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from verifier.review.gitread import Entry, Files

TestsMode = Literal["head", "base"]

TEST_DIR_NAMES = frozenset({"tests", "test", "testing"})
#: Root files pytest reads configuration from, in its order of precedence.
CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
#: Root files that hold more than pytest's configuration: only their pytest section is the tests'.
MIXED_CONFIG_FILES = frozenset({"pyproject.toml", "tox.ini", "setup.cfg"})
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_PYTHON_CLASSES = ("Test",)
DEFAULT_PYTHON_FUNCTIONS = ("test",)
_INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}


def pytest_section(path: str, data: bytes) -> object:
    """The pytest configuration inside a root config file (None when it has none)."""
    text = data.decode("utf-8", "replace")
    try:
        if path.endswith(".toml"):
            doc = tomllib.loads(text)
            if path in ("pytest.toml", ".pytest.toml"):
                return doc.get("pytest")
            tool = doc.get("tool")
            found = tool.get("pytest") if isinstance(tool, dict) else None
            return found if found else None
        section = _INI_SECTIONS.get(path)
        if section is None:
            return None
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        parser.read_string(text)
        if parser.has_section(section):
            return dict(parser.items(section))
    except (tomllib.TOMLDecodeError, configparser.Error, UnicodeError):
        return f"<unparsable {path}>"
    return None


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def _prefix_or_glob(name: str, patterns: tuple[str, ...]) -> bool:
    """pytest's rule for python_classes / python_functions: a prefix, or a glob when it has one."""
    return any(name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatch(name, p)) for p in patterns)


@dataclass(frozen=True)
class Splitter:
    """Decides test or code for a path, with the patterns of both trees of a review."""

    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    test_dirs: tuple[str, ...] = ()
    python_classes: tuple[str, ...] = DEFAULT_PYTHON_CLASSES
    python_functions: tuple[str, ...] = DEFAULT_PYTHON_FUNCTIONS

    @classmethod
    def for_trees(cls, *trees: Mapping[str, Entry]) -> Splitter:
        patterns = set(DEFAULT_PYTHON_FILES)
        dirs: set[str] = set()
        classes: set[str] = set(DEFAULT_PYTHON_CLASSES)
        functions: set[str] = set(DEFAULT_PYTHON_FUNCTIONS)
        for files in trees:
            for name in CONFIG_FILES:
                if name not in files:
                    continue
                section = pytest_section(name, files[name].data)
                if isinstance(section, dict):
                    options = section.get("ini_options", section)
                    if isinstance(options, dict):
                        patterns.update(_as_list(options.get("python_files")))
                        dirs.update(p.strip("/") for p in _as_list(options.get("testpaths")) if p.strip("/."))
                        classes.update(_as_list(options.get("python_classes")))
                        functions.update(_as_list(options.get("python_functions")))
        return cls(
            python_files=tuple(sorted(patterns)),
            test_dirs=tuple(sorted(dirs)),
            python_classes=tuple(sorted(classes)),
            python_functions=tuple(sorted(functions)),
        )

    def is_test_function(self, name: str) -> bool:
        """A function or method name pytest collects as a test (either tree's patterns, or the default)."""
        return _prefix_or_glob(name, self.python_functions)

    def is_test_class(self, name: str) -> bool:
        return _prefix_or_glob(name, self.python_classes)

    def is_test_file(self, path: str) -> bool:
        """A module pytest would collect tests from."""
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".py") or name == "conftest.py":
            return False
        return any(fnmatch.fnmatch(name, p) for p in self.python_files)

    def is_test(self, path: str) -> bool:
        parts = path.split("/")
        if parts[-1] == "conftest.py" or (len(parts) == 1 and parts[0] in CONFIG_FILES):
            return True
        if any(p in TEST_DIR_NAMES for p in parts[:-1]):
            return True
        if any(path.startswith(d + "/") for d in self.test_dirs):
            return True
        return self.is_test_file(path)

    def tests(self, files: Mapping[str, Entry]) -> Files:
        return {p: e for p, e in files.items() if self.is_test(p)}

    def code(self, files: Mapping[str, Entry]) -> Files:
        return {p: e for p, e in files.items() if not self.is_test(p)}


def compose(code: Mapping[str, Entry], tests: Mapping[str, Entry], splitter: Splitter) -> Files:
    """`code`'s code files and `tests`' test files: the tree one run sees."""
    out = splitter.code(code)
    out.update(splitter.tests(tests))
    return out


def base_mode_tests(base: Mapping[str, Entry], head: Mapping[str, Entry], splitter: Splitter) -> Files:
    """`--tests base`: the base's tests, plus the test files the change adds.

    From the head only files that do not exist in the base are taken, and of those never the
    pytest configuration, and a ``conftest.py`` only in a folder the base does not have (so it
    can reach nothing but the change's own new tests).
    """
    tests = splitter.tests(base)
    base_dirs = {p.rsplit("/", 1)[0] for p in base if "/" in p}
    for path, entry in splitter.tests(head).items():
        if path in base or ("/" not in path and path in CONFIG_FILES):
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        if path.endswith("conftest.py") and (folder == "" or folder in base_dirs):
            continue
        tests[path] = entry
    return tests


def infrastructure_changes(base: Mapping[str, Entry], head: Mapping[str, Entry], splitter: Splitter) -> list[str]:
    """Test-side files (not test modules) the change adds, edits or removes: the judge's machinery."""
    out: list[str] = []
    for path in sorted(set(base) | set(head)):
        if not splitter.is_test(path) or splitter.is_test_file(path):
            continue
        old, new = base.get(path), head.get(path)
        if path in MIXED_CONFIG_FILES:
            a = pytest_section(path, old.data) if old else None
            b = pytest_section(path, new.data) if new else None
            if a != b:
                out.append(f"{path} (its pytest configuration)")
            continue
        if old is None:
            out.append(f"{path} (added)")
        elif new is None:
            out.append(f"{path} (removed)")
        elif old != new:
            out.append(f"{path} (edited)")
    return out


def uses_hypothesis(files: Mapping[str, Entry]) -> bool:
    return any(b"hypothesis" in e.data for p, e in files.items() if p.endswith(".py"))
