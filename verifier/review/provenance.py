"""Where a test comes from: unchanged, added, edited or removed by the change. One rule for every test.

What judges a change is more than a test function's body, so a test is **edited** when the
change touches anything the test can see:

- **its own function**: the syntax tree of the function that defines it (decorators
  included, so reformatting or a comment is not an edit but a changed ``parametrize`` list or
  a new ``skip`` mark is), with the header of each class around it. The function is found
  where pytest says it is defined (``item.location``), so an inherited test is its base
  class's method, in whatever file, and a rebound name is whatever the name is bound to;
- **its context**: everything else in the module it is collected from and in the module
  its function is defined in (imports, helpers, fixtures, module-level code, rebinding or
  deleting a test name: the module with its test functions and plain test classes taken
  out), every ``conftest.py`` from the root down to its folder, and, conservatively, the
  pytest configuration and every other test-side file (helpers, data), which can reach any
  test.

A test whose function and context are the same on both sides is **unchanged**; a test the
base does not have is **added**; one the head does not have is **removed**. Tests made at run
time (doctests, generated items) whose function cannot be found fall back to their file.
When the change touches the tests at all (`tests_touched`), the review also runs the base's own
tests on both sides' code (see `verifier.review.classify`).
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, TypeGuard

from verifier.review.gitread import Entry
from verifier.review.pytest_config import CONFIG_FILES
from verifier.review.split import MIXED_CONFIG_FILES, Splitter, pytest_section

Side = Literal["base", "head"]


class Provenance(StrEnum):
    UNCHANGED = "unchanged"
    ADDED = "added"
    EDITED = "edited"
    #: Only in the base (the change removes it); with `--tests base` it still runs.
    REMOVED = "removed"


@dataclass(frozen=True)
class Definition:
    """Where a run said a test's function is defined: a tree path and a 1-based line."""

    path: str
    line: int | None


@dataclass(frozen=True)
class _Module:
    own: dict[str, str]  # qualname -> digest of the function and its enclosing class headers
    lines: dict[int, str]  # a def's line and its decorators' lines -> qualname
    context: str  # digest of the module without its test functions and plain test classes
    tests: list[tuple[str, int]]  # (qualname, line) of what pytest would collect by name
    classes: set[str]  # qualnames of its classes


def _digest(*nodes: ast.AST | str) -> str:
    h = hashlib.sha256()
    for node in nodes:
        h.update(node.encode() if isinstance(node, str) else ast.dump(node, include_attributes=False).encode())
        h.update(b"\0")
    return h.hexdigest()


def _is_function(node: ast.AST) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)


class _Indexer:
    """One module's syntax tree -> `_Module`, with the splitter's test-name rules."""

    def __init__(self, splitter: Splitter) -> None:
        self.names = splitter
        self.own: dict[str, str] = {}
        self.lines: dict[int, str] = {}
        self.tests: list[tuple[str, int]] = []
        self.classes: set[str] = set()

    def index(self, source: bytes) -> _Module | None:
        try:
            module = ast.parse(source)
        except (SyntaxError, ValueError):
            return None
        context: list[ast.stmt] = []
        for node in module.body:
            if _is_function(node):
                self._function(node, "", (), collected=self.names.is_test_function(node.name))
                if self.names.is_test_function(node.name):
                    continue
            elif isinstance(node, ast.ClassDef):
                test_class = self._test_class(node)
                self._class(node, "", (), collected=test_class)
                if test_class and self._plain(node):
                    continue  # its header is part of each of its tests' own digest
                node = self._without_tests(node)
            context.append(node)
        return _Module(
            self.own, self.lines, _digest(ast.Module(body=context, type_ignores=[])), self.tests, self.classes
        )

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, headers: tuple[str, ...], *, collected: bool
    ) -> None:
        qual = prefix + node.name
        self.own[qual] = _digest(node, *headers)
        for line in (node.lineno, *(d.lineno for d in node.decorator_list)):
            self.lines.setdefault(line, qual)
        if collected:
            self.tests.append((qual, node.lineno))

    def _class(self, node: ast.ClassDef, prefix: str, headers: tuple[str, ...], *, collected: bool) -> None:
        inner = (*headers, _digest(self._without_tests(node)))
        self.classes.add(prefix + node.name)
        here = f"{prefix}{node.name}."
        for child in node.body:
            if _is_function(child):
                self._function(child, here, inner, collected=collected and self._test_name(child.name))
            elif isinstance(child, ast.ClassDef):
                self._class(child, here, inner, collected=collected and self._test_class(child))

    def _test_name(self, name: str) -> bool:
        return self.names.is_test_function(name)

    def _test_class(self, node: ast.ClassDef) -> bool:
        """By name, or a unittest TestCase (pytest collects those whatever their name)."""
        return self.names.is_test_class(node.name) or any(_base_name(b).endswith("TestCase") for b in node.bases)

    def _without_tests(self, node: ast.ClassDef) -> ast.ClassDef:
        """The class with its test methods taken out (they are their tests' own), nested classes too."""
        clone = copy.copy(node)
        body: list[ast.stmt] = []
        for child in node.body:
            if _is_function(child) and self._test_name(child.name):
                continue
            body.append(self._without_tests(child) if isinstance(child, ast.ClassDef) else child)
        clone.body = body or [ast.Pass()]
        return clone

    def _plain(self, node: ast.ClassDef) -> bool:
        """A test class whose definition runs nothing but its own tests' definitions."""
        return (
            not node.decorator_list
            and not node.keywords
            and all(isinstance(b, ast.Name | ast.Attribute) for b in node.bases)
            and all(
                (_is_function(c) and self._test_name(c.name))
                or isinstance(c, ast.Pass)
                or (isinstance(c, ast.Expr) and isinstance(c.value, ast.Constant))
                for c in node.body
            )
        )


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def split_node_id(node_id: str) -> tuple[str, str]:
    """pytest node id -> (file path, qualified name without parameters)."""
    path, _, rest = node_id.partition("::")
    if "[" in rest:  # parameter ids come last and may hold anything, "::" included
        rest = rest[: rest.index("[")]
    parts = [p for p in rest.split("::") if p]
    return path, ".".join(parts)


class ProvenanceIndex:
    """Answers `of(node_id)` for one change (base tree -> head tree)."""

    def __init__(self, base: Mapping[str, Entry], head: Mapping[str, Entry], splitter: Splitter | None = None) -> None:
        self.base = base
        self.head = head
        self.splitter = splitter or Splitter.for_change(head, base)
        self._cache: dict[tuple[Side, str], _Module | None] = {}
        self.everywhere = self._changed_everywhere()

    def module(self, side: Side, path: str) -> _Module | None:
        key = (side, path)
        if key not in self._cache:
            entry = (self.base if side == "base" else self.head).get(path)
            ok = entry is not None and path.endswith(".py")
            self._cache[key] = _Indexer(self.splitter).index(entry.data) if ok and entry else None
        return self._cache[key]

    def _changed_everywhere(self) -> list[str]:
        """Test-side changes any test can see: pytest configuration, helpers, data (not test modules, not conftests)."""
        out: list[str] = []
        for path in sorted(set(self.base) | set(self.head)):
            old, new = self.base.get(path), self.head.get(path)
            if old == new or not self.splitter.is_test(path) or self.splitter.is_test_file(path):
                continue
            if path.rsplit("/", 1)[-1] == "conftest.py":
                continue  # a conftest reaches only its own folder: `_conftests`
            if "/" not in path and path in CONFIG_FILES:
                if path in MIXED_CONFIG_FILES and pytest_section(path, old.data if old else b"") == pytest_section(
                    path, new.data if new else b""
                ):
                    continue  # pyproject.toml etc.: only the pytest section is the tests'
                out.append(f"the pytest configuration ({path})")
            else:
                out.append(f"the test-side file {path}")
        return out

    def _conftests(self, path: str) -> list[str]:
        folders = path.split("/")[:-1]
        out = []
        for depth in range(len(folders) + 1):
            conftest = "/".join([*folders[:depth], "conftest.py"])
            if self.base.get(conftest) != self.head.get(conftest):
                out.append(conftest)
        return out

    def _definition(self, path: str, qual: str, where: Definition | None, side: Side) -> tuple[str, str | None]:
        """(file, qualname) of the function that defines the test, as the run that collected it saw it."""
        if where is not None and where.line is not None:
            found = self.module(side, where.path)
            if found is not None and where.line in found.lines:
                return where.path, found.lines[where.line]
        known = any(m is not None and qual in m.own for m in (self.module("base", path), self.module("head", path)))
        return path, (qual if known else None)

    def explain(self, node_id: str, where: Definition | None = None, side: Side = "head") -> tuple[Provenance, str]:
        """(provenance, why) of one test; `where` is its definition in the `side` tree that collected it."""
        path, qual = split_node_id(node_id)
        old, new = self.base.get(path), self.head.get(path)
        if old is None and new is None:
            return Provenance.UNCHANGED, ""  # not a file of either tree (a plugin's item): nothing changed it
        if old is None:
            return Provenance.ADDED, ""
        if new is None:
            return Provenance.REMOVED, ""
        container = qual.rpartition(".")[0]
        if container:  # a test class (and its tests, inherited ones too) the change adds or removes
            had, has = (
                m is not None and container in m.classes for m in (self.module("base", path), self.module("head", path))
            )
            if has and not had:
                return Provenance.ADDED, ""
            if had and not has:
                return Provenance.REMOVED, ""
        file, func = self._definition(path, qual, where, side)
        if func is not None:
            a, b = (m.own.get(func) if m else None for m in (self.module("base", file), self.module("head", file)))
            if a is None and b is not None:
                return Provenance.ADDED, ""
            if b is None and a is not None:
                return Provenance.REMOVED, ""
            if a != b:
                return Provenance.EDITED, ""
        elif old != new:
            return Provenance.EDITED, f"its function was not found, and its file {path} changed"
        why = self._context(path, file)
        return (Provenance.EDITED, why) if why else (Provenance.UNCHANGED, "")

    def of(self, node_id: str, where: Definition | None = None, side: Side = "head") -> Provenance:
        return self.explain(node_id, where, side)[0]

    def _context(self, path: str, file: str) -> str:
        """Why the test's context changed ('' when it did not)."""
        for module in dict.fromkeys((path, file)):
            a, b = self.module("base", module), self.module("head", module)
            if (a.context if a else None) != (b.context if b else None):
                return f"the change edits {module} outside its test functions"
        conftests = self._conftests(path)
        if conftests:
            return f"the change edits {', '.join(conftests)}"
        if self.everywhere:
            return f"the change edits {self.everywhere[0]}" + (
                f" (and {len(self.everywhere) - 1} more test-side files)" if len(self.everywhere) > 1 else ""
            )
        return ""

    def removed_tests(self) -> list[tuple[str, int | None]]:
        """Test functions of the base that the head no longer has, as (node id, line)."""
        out: list[tuple[str, int | None]] = []
        for path in sorted(self.base):
            if not self.splitter.is_test_file(path):
                continue
            old = self.module("base", path)
            new = self.module("head", path) if path in self.head else _Module({}, {}, "", [], set())
            if old is None or new is None:
                continue  # a side does not parse: its collection error tells the story
            out.extend((f"{path}::{q.replace('.', '::')}", line) for q, line in old.tests if q not in new.own)
        return out

    def tests_touched(self) -> bool:
        """Whether the change touches the tests at all (adds, edits or removes any test-side file).

        Then the base's own tests run on both sides too. All of them: the tests share one process,
        so a new test module's import-time code, or a new test that patches something and never
        restores it, reaches tests in every other module."""
        tests = self.splitter.is_test
        return {p: e for p, e in self.base.items() if tests(p)} != {p: e for p, e in self.head.items() if tests(p)}
