"""Where a test comes from: unchanged, added, or edited by the change.

Found from the source of the test's function or method in the two trees (its syntax tree,
decorators included, so reformatting or a comment is not an edit but a changed
``parametrize`` list or a new ``skip`` mark is). When the function cannot be found (a test
made at run time, a doctest), the whole file decides.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Mapping
from enum import StrEnum

from verifier.review.gitread import Entry
from verifier.review.split import Splitter


class Provenance(StrEnum):
    UNCHANGED = "unchanged"
    ADDED = "added"
    EDITED = "edited"
    #: Only in the base (the change removes it); with `--tests base` it still runs.
    REMOVED = "removed"


def _functions(source: bytes) -> dict[str, str] | None:
    """qualname -> digest of the function's syntax tree, for every function and method."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, str] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                dump = ast.dump(node, annotate_fields=True, include_attributes=False)
                out[prefix + node.name] = hashlib.sha256(dump.encode()).hexdigest()
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(module.body, "")
    return out


def split_node_id(node_id: str) -> tuple[str, str]:
    """pytest node id -> (file path, qualified name without parameters)."""
    path, _, rest = node_id.partition("::")
    if "[" in rest:  # parameter ids come last and may hold anything, "::" included
        rest = rest[: rest.index("[")]
    parts = [p for p in rest.split("::") if p]
    return path, ".".join(parts)


class ProvenanceIndex:
    """Answers `provenance(node_id)` for one change (base tree -> head tree)."""

    def __init__(self, base: Mapping[str, Entry], head: Mapping[str, Entry]) -> None:
        self.base = base
        self.head = head
        self._cache: dict[tuple[str, str], dict[str, str] | None] = {}

    def _funcs(self, side: str, path: str) -> dict[str, str] | None:
        key = (side, path)
        if key not in self._cache:
            files = self.base if side == "base" else self.head
            entry = files.get(path)
            self._cache[key] = _functions(entry.data) if entry is not None and path.endswith(".py") else None
        return self._cache[key]

    def of(self, node_id: str) -> Provenance:
        path, qual = split_node_id(node_id)
        old, new = self.base.get(path), self.head.get(path)
        if old is None and new is None:
            return Provenance.UNCHANGED  # not a file of either tree (a plugin's item): nothing changed it
        if old is None:
            return Provenance.ADDED
        if new is None:
            return Provenance.REMOVED
        a = (self._funcs("base", path) or {}).get(qual)
        b = (self._funcs("head", path) or {}).get(qual)
        if a is None and b is None:
            return Provenance.UNCHANGED if old == new else Provenance.EDITED
        if a is None:
            return Provenance.ADDED
        if b is None:
            return Provenance.REMOVED
        return Provenance.UNCHANGED if a == b else Provenance.EDITED

    def removed_tests(self, splitter: Splitter) -> list[tuple[str, int | None]]:
        """Test functions of the base that the head no longer has, as (node id, line)."""
        out: list[tuple[str, int | None]] = []
        for path, entry in sorted(self.base.items()):
            if not splitter.is_test_file(path):
                continue
            new = self._funcs("head", path) if path in self.head else {}
            if new is None:
                continue  # the head's file does not parse: its collection error tells the story
            names = splitter.test_names(entry.data)
            out.extend((f"{path}::{q.replace('.', '::')}", line) for q, line in names if q not in new)
        return out
