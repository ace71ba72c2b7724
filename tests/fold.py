"""What a string expression spells, read from the syntax tree (for the guard tests).

A guard that looks only at string literals misses a value built from pieces: `"do" + "cker"`,
`f"VERIFIER-{'REVIEW'}"`, `"-".join(("VERIFIER", "REVIEW"))`, `"%s:" % "error"`, or a name bound
once to such a value. `spelled` folds those forms; whatever it cannot know (a call, a name bound
to something else) is `HOLE`, so a guard can still see the known part around it.
"""

from __future__ import annotations

import ast
import re

#: Stands for a part of a string that cannot be known without running the code.
HOLE = "\x00"
_FORMAT_FIELD = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]")


def names_bound_once(tree: ast.AST) -> dict[str, ast.expr]:
    """Names assigned exactly once anywhere in the module (`x = ...`, `x: T = ...`), with the value."""
    seen: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            seen.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            seen.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
            seen.setdefault(node.target.id, []).extend([node.value, node.value])  # rebound: unknown
    return {name: values[0] for name, values in seen.items() if len(values) == 1}


def spelled(node: ast.AST, names: dict[str, ast.expr] | None = None, depth: int = 0) -> str:
    """The text `node` evaluates to, with `HOLE` for each part that cannot be known (bytes are
    read as latin-1). Not a string expression at all: `HOLE`."""
    names = names or {}
    if depth > 20:
        return HOLE

    def again(child: ast.AST) -> str:
        return spelled(child, names, depth + 1)

    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return HOLE if node.value is None else str(node.value)
    if isinstance(node, ast.Name):
        value = names.get(node.id)
        return again(value) if value is not None else HOLE
    if isinstance(node, ast.JoinedStr):
        return "".join(again(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return again(node.value) if node.format_spec is None and node.conversion in (-1, 115) else HOLE
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return again(node.left) + again(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        template = again(node.left)
        parts = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        values = [again(p) for p in parts]
        try:
            return template % tuple(values)
        except (TypeError, ValueError, KeyError):
            return _FORMAT_FIELD.sub(HOLE, template)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver, method = node.func.value, node.func.attr
        if method == "join" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return again(receiver).join(again(e) for e in node.args[0].elts)
        if method == "format":
            try:
                return again(receiver).format(
                    *(again(a) for a in node.args), **{k.arg: again(k.value) for k in node.keywords if k.arg}
                )
            except (IndexError, KeyError, ValueError):
                return re.sub(r"\{[^{}]*\}", HOLE, again(receiver))
        if method in ("encode", "decode", "strip", "lstrip", "rstrip"):
            return again(receiver)
        if method in ("upper", "lower", "casefold", "title", "capitalize"):
            return getattr(again(receiver), "lower" if method == "casefold" else method)()
        if method == "replace" and len(node.args) == 2:
            return again(receiver).replace(again(node.args[0]), again(node.args[1]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "bytes"):
        return again(node.args[0]) if node.args else ""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        text = again(node.value)
        bounds = [node.slice.lower, node.slice.upper, node.slice.step]
        if HOLE not in text and all(b is None or isinstance(b, ast.Constant) for b in bounds):
            values = [b.value if isinstance(b, ast.Constant) else None for b in bounds]
            if all(v is None or isinstance(v, int) for v in values):
                return text[slice(*values)]
    return HOLE


def pieces(text: str) -> list[str]:
    """The known runs of a spelled text."""
    return [p for p in text.split(HOLE) if p]


def string_expressions(tree: ast.AST) -> list[ast.expr]:
    """Every expression that may build a string: literals, f-strings, `+`, `%`, `.format`, `.join`
    (a name is read where it is bound, and inside these)."""
    kinds = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.Subscript)
    return [node for node in ast.walk(tree) if isinstance(node, kinds)]
