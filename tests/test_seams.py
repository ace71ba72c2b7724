"""Guards of the house's structure (issues 22, 33): no import circle inside `verifier/`, none
even through `if TYPE_CHECKING:` imports, nothing that imports a package above it, and no import
from the core into an extra. Every import counts, also one inside a function (a circle hidden
behind a function-local import is still a circle)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "verifier"
#: Optional parts, each behind an extra of pyproject.toml (or the command line on top of all).
EXTRAS = (
    "verifier.agents",
    "verifier.bench",
    "verifier.cluster",
    "verifier.review",
    "verifier.serve",
    "verifier.client",
    "verifier.cli",
    "verifier.__main__",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, name: str, modules: set[str], *, type_only: bool = False) -> set[str]:
    """The modules of `verifier` that `path` imports (resolved to the longest known name); with
    `type_only`, also those imported only under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_only:
            for child in node.orelse:
                visit(child)
            return
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the submodule (and pkg's __init__, which the graph
            # leaves out for a submodule of pkg); `from pkg import name` imports pkg itself.
            subs = [f"{base}.{alias.name}" for alias in node.names]
            targets = subs + ([] if all(s in modules for s in subs) else [base])
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph(*, type_only: bool = False, ancestors: bool = False) -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    names = set(files)
    graph = {name: _imports(path, name, names, type_only=type_only) for name, path in files.items()}
    if ancestors:
        return graph
    # A package's __init__ is what its submodules import implicitly: not an edge of its own.
    return {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_no_import_circle_in_the_package() -> None:
    assert _circles(_graph()) == []


def test_no_circle_even_through_type_only_imports() -> None:
    """A circle that only type checking walks is still two modules that cannot be read apart."""
    assert _circles(_graph(type_only=True)) == []


def _upward(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(name, t) for name, targets in graph.items() for t in targets if name.startswith(t + ".")}


def test_nothing_imports_a_package_above_it() -> None:
    """A module imports its leaves, never a package it is part of (`from verifier import
    __version__` in verify.py was one: the version lives in `verifier._distribution`)."""
    assert _upward(_graph(type_only=True, ancestors=True)) == set()


def test_the_core_imports_no_extra() -> None:
    graph = _graph()
    upward = {
        (name, target)
        for name, targets in graph.items()
        if not name.startswith(EXTRAS)
        for target in targets
        if target.startswith(EXTRAS)
    }
    assert upward == set(), "the core imports an extra (move the code into the extra): " + str(sorted(upward))


def test_the_guards_see_a_circle_and_an_upward_import() -> None:
    """The guards can fail: a planted circle and a planted core -> extra import are found."""
    graph = {"verifier.a": {"verifier.b"}, "verifier.b": {"verifier.a"}, "verifier.c": set()}
    assert _circles(graph) == [["verifier.a", "verifier.b"]]
    names = {"verifier.verify", "verifier.cluster", "verifier.cluster.backend"}
    source = "def f():\n    from verifier.cluster import ray_verifier\n"
    planted = ROOT / "tests" / "_planted_seam.py"
    try:
        planted.write_text(source)
        assert _imports(planted, "verifier.verify", names) == {"verifier.cluster"}
        planted.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from verifier.cluster import x\n")
        assert _imports(planted, "verifier.verify", names) == set()
        assert _imports(planted, "verifier.verify", names, type_only=True) == {"verifier.cluster"}
        planted.write_text("from verifier.cluster import backend\n")
        assert _imports(planted, "verifier.verify", names) == {"verifier.cluster.backend"}
        planted.write_text("from verifier.cluster import __version__\n")
        assert _upward({"verifier.cluster.backend": _imports(planted, "verifier.cluster.backend", names)}) == {
            ("verifier.cluster.backend", "verifier.cluster")
        }
    finally:
        planted.unlink()


def _modules_with_all() -> list[str]:
    return sorted(
        _module_name(p)
        for p in PACKAGE.rglob("*.py")
        if "runner" not in p.parts
        and any(
            isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
            for n in ast.parse(p.read_text()).body
        )
    )


def test_every_all_is_complete_and_each_name_resolves() -> None:
    """`__all__` names what a module offers: each name is there (ruff's RUF022 keeps it sorted)."""
    import importlib

    checked = _modules_with_all()
    assert "verifier" in checked
    for name in checked:
        module = importlib.import_module(name)
        exported = list(module.__all__)
        assert len(exported) == len(set(exported)), name
        missing = [n for n in exported if not hasattr(module, n)]
        assert not missing, (name, missing)
    import verifier

    # What the package imports eagerly (its errors) and what it loads on first use (_HOMES).
    eager = {n for n, v in vars(verifier).items() if isinstance(v, type) and v.__module__ == "verifier.errors"}
    offered = set(verifier._HOMES) | eager | {"__version__"}
    assert set(verifier.__all__) == offered, sorted(set(verifier.__all__) ^ offered)


#: A warm pool's settings have one home, `verifier.limits.PoolConfig`; a signature that takes
#: one of them loose restates it. (The runner's `launch_command(max_jobs, preload)` is the
#: protocol's own wire form, below the configuration.)
POOL_SETTINGS = {"policy", "size", "max_uses", "preload"}
POOL_SETTINGS_ALLOWED = {"verifier.runner.protocol.constants.launch_command"}


def _loose_pool_settings() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
                # "policy" alone is a common word (a review's, a run's); the pool's come in a set.
                loose = params & POOL_SETTINGS
                where = f"{name}.{node.name}"
                if (len(loose) >= 2 or loose & {"max_uses", "preload"}) and where not in POOL_SETTINGS_ALLOWED:
                    found.append(f"{where}({', '.join(sorted(loose))})")
    return found


def test_pool_settings_travel_as_one_object() -> None:
    assert _loose_pool_settings() == []


def test_the_default_preload_is_written_once() -> None:
    """ "pytest,hypothesis" (what a pytest runner pre-imports) lives in runner/protocol/constants.py."""
    holders = [p for p in PACKAGE.rglob("*.py") if '"pytest,hypothesis"' in p.read_text()]
    assert [p.relative_to(ROOT).as_posix() for p in holders] == ["verifier/runner/protocol/constants.py"]


#: A function longer than this is split, or says why it is long in a comment just above it.
LONG_FUNCTION = 80


def test_long_functions_are_split_or_explained() -> None:
    unexplained = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if length > LONG_FUNCTION and not lines[first - 2].lstrip().startswith("#"):
                    unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert unexplained == []


def _public_exceptions() -> list[type[BaseException]]:
    """Every public exception class defined in verifier/ (outside runner/, which is standard
    library only and cannot import `verifier.errors`). Control-flow signals that derive from
    BaseException alone are not errors a caller catches."""
    import importlib

    found: list[type[BaseException]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "runner" in path.relative_to(PACKAGE).parts:
            continue
        classes = [n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)]
        if not any(not c.startswith("_") for c in classes):
            continue
        module = importlib.import_module(_module_name(path))
        for c in classes:
            cls = getattr(module, c)
            if not c.startswith("_") and isinstance(cls, type) and issubclass(cls, Exception):
                found.append(cls)
    return found


def _documented_tree() -> list[tuple[int, str, str]]:
    """(indent, class name, line) of each line of the tree in `verifier/errors.py`'s docstring."""
    import verifier.errors

    doc = verifier.errors.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in block.splitlines():
        text = line.lstrip()
        indent = len(line) - len(text)
        rows.append((indent, text.lstrip("+- ").split()[0], text))
    return rows


def test_every_public_exception_is_in_one_tree_under_verifier_error() -> None:
    """httpx's habit: one `except VerifierError` catches everything verifier raises, and the tree in
    errors.py shows each class where it is (its parent, its module)."""
    from verifier.errors import VerifierError

    exceptions = _public_exceptions()
    assert len(exceptions) >= 20, [e.__name__ for e in exceptions]
    outside = [f"{e.__module__}.{e.__qualname__}" for e in exceptions if not issubclass(e, VerifierError)]
    assert not outside, "derive these from VerifierError (keep a builtin base callers catch): " + str(outside)

    rows = _documented_tree()
    parent_of: dict[int, str] = {}  # the documented parent of each row
    for i, (indent, _, _) in enumerate(rows):
        parents = [j for j in range(i) if rows[j][0] < indent]
        if parents:
            parent_of[i] = rows[parents[-1]][1]
    unmatched = set(range(len(rows)))
    wrong: list[str] = []
    for e in exceptions:
        home = e.__module__.removeprefix("verifier.").replace(".", "/") + ".py"
        candidates = [i for i, (_, name, text) in enumerate(rows) if name == e.__name__]
        if home != "errors.py":
            candidates = [i for i in candidates if f"[{home}]" in rows[i][2]]
        if len(candidates) != 1:
            wrong.append(f"{e.__name__} [{home}]: {len(candidates)} lines in the tree")
            continue
        unmatched.discard(candidates[0])
        if e is VerifierError:
            continue
        base = next(b for b in e.__mro__[1:] if b in exceptions)
        if parent_of.get(candidates[0]) != base.__name__:
            wrong.append(f"{e.__name__}: the tree says under {parent_of.get(candidates[0])}, the code {base.__name__}")
        for builtin in (b for b in e.__bases__ if b.__module__ == "builtins" and b is not Exception):
            if f"also a {builtin.__name__}" not in rows[candidates[0]][2]:
                wrong.append(f"{e.__name__}: the tree does not say it is also a {builtin.__name__}")
    wrong += [f"the tree names {rows[i][1]}, which is no exception of verifier" for i in sorted(unmatched)]
    assert not wrong, "verifier/errors.py's tree and the code disagree:\n" + "\n".join(wrong)


def test_an_extras_errors_are_importable_from_the_extra() -> None:
    """What `verifier.agents`' API raises (its own exceptions, and `UnknownSandbox` from
    `DockerSandbox.attach`) is importable from `verifier.agents`, as its other names are."""
    import verifier.agents

    raised = {e.__name__ for e in _public_exceptions() if e.__module__.startswith("verifier.agents")}
    assert raised, "no exception defined in verifier.agents: this guard watches nothing"
    for name in sorted(raised | {"UnknownSandbox"}):
        assert name in verifier.agents.__all__ and hasattr(verifier.agents, name), name


def test_every_module_is_named_in_the_architecture() -> None:
    """A newcomer finds every module's job in docs/architecture.md ("Every module")."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = sorted(
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if f"`{p.relative_to(PACKAGE)}`" not in text
    )
    assert missing == [], "name these in docs/architecture.md's 'Every module': " + ", ".join(missing)
