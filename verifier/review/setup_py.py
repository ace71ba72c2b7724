"""setup.py read as text: its `setup(...)` call and the module-level names its keywords use,
from its syntax tree, never run. One reading for the static dependencies (`deps`) and for the
check that they are literals (`backend_metadata`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class SetupCall:
    """setup.py's `setup(...)` call (None: there is none) and the module's `NAME = value`
    assignments its keywords may name: read from its syntax tree, never run."""

    call: ast.Call | None
    names: dict[str, ast.expr]

    def keyword(self, value: ast.expr) -> ast.expr:
        """A keyword's value, the assignment's when it is a module-level name."""
        return self.names.get(value.id, value) if isinstance(value, ast.Name) else value


def read_setup_call(source: bytes) -> SetupCall | None:
    """setup.py's first `setup(...)` call, or None when it does not parse as Python here."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called == "setup":
            return SetupCall(call, names)
    return SetupCall(None, names)
