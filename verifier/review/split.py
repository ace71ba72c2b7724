"""Which files of a tree are its tests, and the trees a review runs.

The one rule, and its one home. A file is a **test module** when pytest would collect tests
from it in the review's session (rootdir and working directory: the repository root): it is
one of the session's paths itself, or lies under one of them, outside the folders pytest does
not enter (``norecursedirs``, ``__pycache__``, virtual environments), and matches
``python_files`` (or the doctest files' ``test*.txt``). The session's paths are pytest's: the
paths in ``addopts`` and ``--test-path``, else ``testpaths`` (globbed), else the root; the
configuration is the file pytest would read (`pytest_config.locate`).

The **tests** of a tree are its test modules, every ``conftest.py``, pytest's configuration
(the root's configuration files and the file the session reads), everything under a
``--test-path`` folder, and, inside the session's paths, everything under a folder named
``tests``, ``test`` or ``testing`` (helpers and data; our convention, not pytest's). The rest
is **code**. A run's tree is one side's code plus one side's tests, as SWE-bench applies a
test patch to both sides of a change. `is_test_function` and `is_test_class` say which names
are tests (either side's ``python_functions`` / ``python_classes``, and pytest's defaults).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from verifier.errors import InvalidInput
from verifier.review import pytest_options
from verifier.review.gitread import Entry, Files
from verifier.review.pytest_config import (
    CONFIG_FILES,
    DEFAULTS,
    ConfigError,
    PytestConfig,
    all_paths,
    common_folder,
    fnmatch_ex,
    glob,
    load,
    locate,
)
from verifier.text import shown_name

TestsMode = Literal["head", "base"]

TEST_DIR_NAMES = frozenset({"tests", "test", "testing"})
#: Root files that hold more than pytest's configuration: only their pytest section is the tests'.
MIXED_CONFIG_FILES = frozenset({"pyproject.toml", "tox.ini", "setup.cfg"})
#: The doctest plugin's default `--doctest-glob`: text files it collects.
DOCTEST_TEXT = "test*.txt"


def pytest_section(path: str, data: bytes) -> object:
    """The pytest configuration inside a config file (None when it has none)."""
    try:
        return load(posixpath.basename(path), data)
    except ConfigError as exc:
        return f"<unparsable {path}: {exc}>"


def normal_test_path(path: str) -> str:
    """A `--test-path` as a tree path ('' is the root); InvalidInput when it leaves the tree."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith(("/", "-")) or ".." in parts or "\0" in path:
        raise InvalidInput(f"--test-path {path!r}: give a file or folder relative to the repository root")
    return "/".join(parts)


def _in(path: str, root: str) -> bool:
    return root == "" or path == root or path.startswith(root + "/")


@dataclass(frozen=True)
class Splitter:
    """Decides test or code for a path, and which names are tests, as the session's pytest would."""

    config: PytestConfig = field(default_factory=PytestConfig)
    #: The session's paths (tree paths; '' is the root).
    roots: tuple[str, ...] = ("",)
    #: `--test-path` entries: everything in them is the tests'.
    claimed: tuple[str, ...] = ()
    #: Folders pytest skips as virtual environments.
    venvs: frozenset[str] = frozenset()
    #: The other side's splitter: a file is the tests' only when both sides' configurations agree.
    other: Splitter | None = None

    @classmethod
    def for_change(
        cls, tests_side: Mapping[str, Entry], other_side: Mapping[str, Entry], test_paths: Sequence[str] = ()
    ) -> Splitter:
        """The splitter of a review: the tests side's configuration is the session's (pytest reads
        it in both runs); a file is the tests' only when the other side's configuration says so
        too, so a change cannot move code to the tests' side by editing the configuration (with
        ``python_files = *.py`` the base run would otherwise get the head's code)."""
        other = cls.for_tree(other_side, test_paths, also=tests_side)
        mine = cls.for_tree(tests_side, test_paths, also=other_side)
        return cls(mine.config, mine.roots, mine.claimed, mine.venvs, other)

    @classmethod
    def for_tree(cls, files: Mapping[str, Entry], test_paths: Sequence[str] = (), also: Iterable[str] = ()) -> Splitter:
        """The splitter of a session on the tests side `files` (their configuration decides);
        `test_paths` are the `--test-path`s, `also` the other side's paths (for globs)."""
        paths = all_paths(files) | all_paths(also)
        claimed = tuple(normal_test_path(p) for p in test_paths)
        for p in claimed:
            if p and p not in paths:
                raise InvalidInput(f"--test-path {p!r}: no such file or folder in the base or head tree")
        config = locate(files, common_folder(claimed, files))
        roots = [normal_test_path(p) for p in pytest_options.paths(config.get("addopts")) if not p.startswith("/")]
        roots = [p for p in roots if p in paths or p == ""] + list(claimed)
        if not roots:
            roots = [hit for entry in config.get("testpaths") for hit in glob(entry, paths)]
        venvs = frozenset(
            posixpath.dirname(p.removesuffix("/conda-meta/history") if p.endswith("conda-meta/history") else p)
            for p in paths
            if posixpath.basename(p) == "pyvenv.cfg" or p.endswith("conda-meta/history")
        )
        return cls(config=config, roots=tuple(dict.fromkeys(roots or [""])), claimed=claimed, venvs=venvs)

    def session_options(self) -> tuple[str, ...]:
        """pytest options that pin the session to this configuration, in every session of a run (a
        rerun's node ids would otherwise start pytest's search for its configuration elsewhere)."""
        inifile = self.config.inifile
        if inifile is None:
            return ("-c", "/dev/null", "--confcutdir", ".")
        return ("-c", inifile, "--confcutdir", posixpath.dirname(inifile) or ".")

    @property
    def python_files(self) -> tuple[str, ...]:
        return self.config.get("python_files")

    def _entered(self, root: str, path: str) -> bool:
        """Whether pytest, collecting from `root`, enters every folder on the way to `path`."""
        below = path[len(root) + 1 :] if root else path
        folder = root
        for part in below.split("/")[:-1]:
            folder = f"{folder}/{part}" if folder else part
            if part == "__pycache__" or folder in self.venvs:
                return False
            if any(fnmatch_ex(p, folder) for p in self.config.get("norecursedirs")):
                return False
        return True

    def is_test_file(self, path: str) -> bool:
        """A file pytest would collect tests from (a module, or a doctest text file)."""
        name = posixpath.basename(path)
        if name == "conftest.py":
            return False
        for root in self.roots:
            if path == root:
                return name.endswith((".py", ".txt", ".rst"))  # a path given to pytest is collected by name
            if _in(path, root) and self._entered(root, path):
                if name.endswith(".py") and any(fnmatch_ex(p, path) for p in self.python_files):
                    return True
                if fnmatch_ex(DOCTEST_TEXT, path):
                    return True
        return False

    def is_test(self, path: str) -> bool:
        """The tests' (taken from the tests side), as opposed to code (taken from each run's own side)."""
        return self.by_own_configuration(path) and (self.other is None or self.other.by_own_configuration(path))

    def by_own_configuration(self, path: str) -> bool:
        """`is_test` by this side's configuration alone."""
        parts = path.split("/")
        if parts[-1] == "conftest.py" or (len(parts) == 1 and parts[0] in CONFIG_FILES):
            return True
        if path == self.config.inifile or self.is_test_file(path):
            return True
        if any(_in(path, c) for c in self.claimed if c):
            return True
        in_session = any(_in(path, r) for r in self.roots)
        return in_session and any(p in TEST_DIR_NAMES for p in parts[:-1])

    def tests(self, files: Mapping[str, Entry]) -> Files:
        return {p: e for p, e in files.items() if self.is_test(p)}

    def code(self, files: Mapping[str, Entry]) -> Files:
        return {p: e for p, e in files.items() if not self.is_test(p)}

    def is_test_function(self, name: str) -> bool:
        """A function or method name pytest collects as a test, by either side's `python_functions`
        or pytest's default (more than one session collects: the finder of edited and removed tests
        must not miss one because the change renamed the pattern)."""
        return self._names("python_functions", name)

    def is_test_class(self, name: str) -> bool:
        """A class name pytest collects tests from, by either side's `python_classes` or the default."""
        return self._names("python_classes", name)

    def _names(self, option: str, name: str) -> bool:
        sides = (self.config, *((self.other.config,) if self.other is not None else ()))
        return _matches((*DEFAULTS[option], *(c for config in sides for c in config.get(option))), name)


def _matches(options: Iterable[str], name: str) -> bool:
    """pytest's `_matches_prefix_or_glob_option`: a prefix, or a glob when it looks like one."""
    return any(name.startswith(o) or (any(c in o for c in "*?[") and fnmatch.fnmatch(name, o)) for o in options)


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
        if path in base or ("/" not in path and path in CONFIG_FILES) or path == splitter.config.inifile:
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
                out.append(f"{shown_name(path)} (its pytest configuration)")
            continue
        if old is None:
            out.append(f"{shown_name(path)} (added)")
        elif new is None:
            out.append(f"{shown_name(path)} (removed)")
        elif old != new:
            out.append(f"{shown_name(path)} (edited)")
    return out


def uses_hypothesis(files: Mapping[str, Entry]) -> bool:
    return any(b"hypothesis" in e.data for p, e in files.items() if p.endswith(".py"))
