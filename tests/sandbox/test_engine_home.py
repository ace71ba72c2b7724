"""The engine's one home: `verifier/sandbox/container.py` is the only module that imports the
Docker SDK (with `hardening.py`'s create argument types), makes, attaches, starts and removes
containers, and catches the engine's errors (turning them into ours); `verifier/sandbox/gc.py`
is the only one that lists containers to sweep them. Every module under verifier/ is parsed
(never imported), so a new wing that reopens either seam fails here, naming file and line.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from tests.fold import HOLE, names_bound_once, spelled, string_expressions

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
HOME = "verifier/sandbox/container.py"
SWEEP = "verifier/sandbox/gc.py"
#: Module -> the part of the Docker SDK it may import ("docker": all of it).
DOCKER_IMPORTS = {HOME: "docker", "verifier/sandbox/hardening.py": "docker.types"}
#: Where the engine's errors come from: the SDK's and its transport's.
ERROR_MODULES = ("docker", "requests")
#: The home's own tuple of them: using it is catching them.
ERROR_NAMES = {"ENGINE_ERRORS"}
#: The home itself, as modules import it: its functions are engine calls.
HOME_MODULE = "verifier.sandbox.container"
#: What the home exports that is not a call to the engine (its errors, constants, types).
HOME_NOT_CALLS = {"EngineError", "NameTaken", "ENGINE_ERRORS", "Client", "REMOVE_BUDGET_S", "SIGKILL_EXIT"}
#: Names in a receiver chain that hold an engine client (`api.x()`, `self._client.api.x()`, `client.x()`).
CLIENT_NAMES = {"api", "client", "_client"}
#: Exceptions that catch (nearly) everything.
BROAD = {"Exception", "BaseException"}
#: The engine's failures as the home raises them.
TYPED = {"EngineError", "SandboxUnavailable"}
#: Requests that make, attach, start or remove a container: the home's alone.
CONTAINER_CALLS = {"create_container", "create_host_config", "attach_socket", "remove_container", "from_env"}
#: Calls that import the module their first argument names (importlib's, the builtin's, runpy's,
#: pkgutil's; `find_spec` of a submodule imports its parent).
IMPORTING_CALLS = {"import_module", "__import__", "find_spec", "find_loader", "run_module", "resolve_name", "reload"}
#: Dynamic imports whose argument a reader cannot know, each reviewed: module -> the argument's
#: source. (The runner's are the candidate's and the suite's modules, inside the image, where the
#: Docker SDK is not installed.)
DYNAMIC_IMPORTS_ALLOWED = {
    ("verifier/__init__.py", "home"),  # the lazy names of the package, from _HOMES
    (
        "verifier/runner/trusted.py",
        "{'pytest': '_pytest.python', 'hypothesis': 'hypothesis.strategies'}.get(name, name)",
    ),
    ("verifier/agents/__init__.py", "name"),  # find_spec over _REQUIRED, the agents extra's packages
    ("verifier/runner/candidate.py", "name"),
    ("verifier/runner/handles.py", "module"),  # only one of _ABC_MODULES (the standard library's ABCs)
    ("verifier/runner/review_tamper.py", "module"),
    ("verifier/runner/scidata/base.py", "name"),
    ("verifier/runner/trusted.py", "top"),
    ("verifier/runner/trusted.py", "name"),  # only one of protocol.PRELOADABLE (numpy, pandas)
    ("verifier/runner/zygote.py", "name"),
}
#: A text that names the SDK as a module: "docker", "docker.errors", or an import statement of it.
NAMES_THE_SDK = re.compile(r"docker(\.\w+)*|(.*[\s;])?(import|from)\s+docker\b.*", re.DOTALL)


@functools.cache
def modules() -> tuple[tuple[str, ast.Module], ...]:
    """(path from the checkout, syntax tree) of every module under verifier/."""
    paths = sorted(PACKAGE.rglob("*.py"))
    assert len(paths) > 50, f"found only {len(paths)} modules under {PACKAGE}"
    return tuple(
        (path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text(), filename=str(path))) for path in paths
    )


def under(name: str, root: str) -> bool:
    return name == root or name.startswith(root + ".")


def dotted(node: ast.AST) -> str:
    """`a.b.c` for an attribute chain on a name, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def docker_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of the Docker SDK, also inside functions."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if under(alias.name, "docker"):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and under(node.module, "docker"):
            yield node.lineno, node.module


def dynamic_imports(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    """(line, what the argument spells, its source) of every call that imports a module by name."""
    names = names_bound_once(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
        if func in IMPORTING_CALLS and arg is not None:
            yield node.lineno, spelled(arg, names), ast.unparse(arg)


def may_import_docker(text: str) -> bool:
    """The spelled name is the SDK's, or so little of it is known that it could be."""
    known = text.split(HOLE, 1)[0]
    return bool(NAMES_THE_SDK.fullmatch(text)) or (
        HOLE in text and ("docker".startswith(known) or under(known, "docker"))
    )


def sdk_names(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, text) of every string expression that spells the SDK's module name (for
    `importlib`, `exec`, `sys.modules[...]`): one per line, the first found."""
    names = names_bound_once(tree)
    lines: set[int] = set()
    for node in string_expressions(tree):
        text = spelled(node, names)
        if node.lineno not in lines and any(NAMES_THE_SDK.fullmatch(p) for p in [text, *text.split(HOLE)]):
            lines.add(node.lineno)
            yield node.lineno, text.replace(HOLE, "…")


def engine_catches(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, name) of every `except` that names one of the engine's errors: a name of the SDK or
    its transport (`docker.errors.X`, `requests.exceptions.X`, or a name imported from them) or
    the home's tuple of them. Also what is imported from the home's tuple."""
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                bound = alias.asname or alias.name
                if any(under(node.module, root) for root in ERROR_MODULES):
                    imported.add(bound)
                if alias.name in ERROR_NAMES:
                    imported.add(bound)
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            for part in ast.walk(node.type):
                name = dotted(part)
                if name and (
                    any(under(name, root) for root in ERROR_MODULES)
                    or name.split(".")[0] in imported
                    or name.split(".")[-1] in ERROR_NAMES
                ):
                    yield node.lineno, name
                    break


def calls(tree: ast.Module, names: set[str]) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names:
            yield node.lineno, node.func.attr


def engine_calls(tree: ast.Module, node: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, call) of every call to the engine under `node`: a request on an engine client
    (a receiver chain through `api` or `client`) or a function of the engine's home."""
    home = {
        alias.asname or alias.name
        for imp in ast.walk(tree)
        if isinstance(imp, ast.ImportFrom) and imp.module == HOME_MODULE
        for alias in imp.names
        if alias.name not in HOME_NOT_CALLS
    }
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        name = dotted(call.func)
        parts = name.split(".")
        if name and (parts[0] in home or any(part in CLIENT_NAMES for part in parts[:-1])):
            yield call.lineno, name


def broad(handler: ast.ExceptHandler) -> bool:
    """Whether an `except` catches everything (bare, Exception, BaseException, or a tuple with one)."""
    if handler.type is None:
        return True
    return any(dotted(part).split(".")[-1] in BROAD for part in ast.walk(handler.type))


def reraises(handler: ast.ExceptHandler) -> bool:
    """Whether the handler passes what it caught on unchanged (a bare `raise`): cleanup, not a catch."""
    return any(isinstance(node, ast.Raise) and node.exc is None for node in ast.walk(handler))


def catches_engine_error(handler: ast.ExceptHandler) -> bool:
    """Whether the handler names EngineError (or its base SandboxUnavailable)."""
    return handler.type is not None and any(dotted(part).split(".")[-1] in TYPED for part in ast.walk(handler.type))


def broad_catches_of_engine_calls(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, call) of every broad `except` that swallows (or re-types) an engine call's failure.
    A broad `except` after one that takes EngineError sees only our own faults: not counted."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Try, ast.TryStar)):
            continue
        inside = [found for stmt in node.body for found in engine_calls(tree, stmt)]
        if not inside:
            continue
        for handler in node.handlers:
            if catches_engine_error(handler):
                break
            if broad(handler) and not reraises(handler):
                yield handler.lineno, inside[0][1]


def test_docker_is_imported_only_in_the_engines_home() -> None:
    found: dict[str, list[str]] = {}
    outside: list[str] = []
    for path, tree in modules():
        for line, module in docker_imports(tree):
            found.setdefault(path, []).append(module)
            allowed = DOCKER_IMPORTS.get(path)
            if allowed is None or not under(module, allowed):
                outside.append(f"{path}:{line}: imports {module}")
    assert not outside, (
        f"the Docker SDK is imported outside {HOME}; ask the engine through it (connect, launch, "
        "remove, inspect_image, translated):\n" + "\n".join(outside)
    )
    assert "docker" in found.get(HOME, []), f"{HOME} no longer imports docker: this guard watches nothing"


def test_docker_is_not_imported_by_name_outside_the_engines_home() -> None:
    """`importlib.import_module("docker")`, `__import__("do" + "cker")`, `exec("import docker")`,
    `sys.modules["docker"]`: the SDK named as a string reopens the seam as surely as `import docker`.
    A dynamic import whose argument cannot be read is allowed only where it was reviewed."""
    outside: list[str] = []
    for path, tree in modules():
        allowed = DOCKER_IMPORTS.get(path)
        for line, text, source in dynamic_imports(tree):
            if may_import_docker(text) and (path, source) not in DYNAMIC_IMPORTS_ALLOWED and allowed is None:
                outside.append(f"{path}:{line}: imports {source} (may be the Docker SDK)")
        for line, text in sdk_names(tree):
            if allowed is None or not under(text, allowed):
                outside.append(f"{path}:{line}: names the Docker SDK: {text!r}")
    assert not outside, f"the Docker SDK is reached by name outside {HOME}:\n" + "\n".join(outside)
    seen = {(path, source) for path, tree in modules() for _, text, source in dynamic_imports(tree) if HOLE in text}
    assert seen >= DYNAMIC_IMPORTS_ALLOWED, f"allowed but gone (drop them): {sorted(DYNAMIC_IMPORTS_ALLOWED - seen)}"


def test_the_engines_errors_are_caught_only_in_its_home() -> None:
    outside = [
        f"{path}:{line}: catches {name}"
        for path, tree in modules()
        if path != HOME
        for line, name in engine_catches(tree)
    ]
    assert not outside, (
        f"the engine's errors are caught outside {HOME}; wrap the request in `translated()` and "
        "catch EngineError (a SandboxUnavailable):\n" + "\n".join(outside)
    )
    home = dict(modules())[HOME]
    assert list(engine_catches(home)), f"{HOME} catches none of the engine's errors: this guard watches nothing"


def test_no_broad_except_wraps_an_engine_call() -> None:
    """Engine calls go through the home's typed functions, whose errors are EngineError: a broad
    `except` around one would also swallow our own bugs (and KeyboardInterrupt, when bare)."""
    outside = [
        f"{path}:{line}: a broad except around {call}()"
        for path, tree in modules()
        if path != HOME
        for line, call in broad_catches_of_engine_calls(tree)
    ]
    assert not outside, (
        f"a broad `except` wraps an engine call outside {HOME}; catch EngineError (the home's "
        "functions raise it) or re-raise:\n" + "\n".join(outside)
    )


def test_containers_are_made_and_removed_only_in_the_engines_home() -> None:
    outside = [
        f"{path}:{line}: .{name}()"
        for path, tree in modules()
        if path != HOME
        for line, name in calls(tree, CONTAINER_CALLS)
    ]
    assert not outside, f"containers are made or removed outside {HOME} (use launch / remove):\n" + "\n".join(outside)


def test_containers_are_swept_by_label_only_in_gc() -> None:
    listed = {path: [line for line, _ in calls(tree, {"containers"})] for path, tree in modules()}
    outside = [f"{path}:{line}: lists containers" for path, lines in listed.items() if path != SWEEP for line in lines]
    assert not outside, f"containers are listed (to sweep them) outside {SWEEP}; use gc.sweep:\n" + "\n".join(outside)
    assert listed[SWEEP], f"{SWEEP} lists no containers: this guard watches nothing"


def test_the_guard_sees_what_it_forbids() -> None:
    """The detectors themselves, on code that reopens each seam."""
    sample = ast.parse(
        "import docker.errors\n"
        "from requests.exceptions import ConnectionError as Gone\n"
        "from verifier.sandbox.container import ENGINE_ERRORS\n"
        "def f(api):\n"
        "    import docker\n"
        "    try:\n"
        "        api.create_container('x')\n"
        "    except docker.errors.NotFound:\n"
        "        pass\n"
        "    except (Gone, KeyError):\n"
        "        pass\n"
        "    except ENGINE_ERRORS:\n"
        "        pass\n"
        "    except (*ENGINE_ERRORS, OSError):\n"
        "        pass\n"
        "    except OSError:\n"
        "        pass\n"
    )
    assert [m for _, m in docker_imports(sample)] == ["docker.errors", "docker"]
    assert sorted(line for line, _ in engine_catches(sample)) == [8, 10, 12, 14]
    assert [n for _, n in calls(sample, CONTAINER_CALLS)] == ["create_container"]


def test_the_guard_sees_the_sdk_imported_by_name() -> None:
    sample = ast.parse(
        "import importlib, sys\n"
        "A = 'do'\n"
        "def f(x):\n"
        "    importlib.import_module('docker')\n"  # 4
        "    __import__('do' + 'cker')\n"  # 5
        "    importlib.import_module(A + 'cker.errors')\n"  # 6
        "    importlib.import_module(f'{A}cker')\n"  # 7
        "    importlib.import_module(''.join(['doc', 'ker']))\n"  # 8
        "    exec('import docker as d')\n"  # 9
        "    sys.modules['docker']\n"  # 10
        "    importlib.import_module(x)\n"  # 11: unknown
        "    importlib.import_module('doc' + x)\n"  # 12: could be
        "    importlib.import_module(f'verifier.agents.{x}')\n"  # cannot be
        "    importlib.import_module('dockerfile_parse')\n"  # another package
    )
    flagged = sorted({line for line, text, _ in dynamic_imports(sample) if may_import_docker(text)})
    assert flagged == [4, 5, 6, 7, 8, 11, 12]
    assert [line for line, _ in sdk_names(sample)] == [4, 5, 6, 7, 8, 9, 10]


def test_the_broad_except_guard_sees_what_it_forbids() -> None:
    sample = ast.parse(
        "from verifier.sandbox.container import EngineError, container_record\n"
        "def f(api, self):\n"
        "    try:\n"
        "        api.exec_inspect('x')\n"
        "    except Exception:\n"
        "        pass\n"
        "    try:\n"
        "        container_record(api, 'x')\n"
        "    except:\n"
        "        pass\n"
        "    try:\n"
        "        self._client.api.kill('x')\n"
        "    except (OSError, BaseException) as exc:\n"
        "        raise RuntimeError() from exc\n"
        "    try:\n"
        "        api.kill('x')\n"
        "    except BaseException:\n"
        "        cleanup()\n"
        "        raise\n"
        "    try:\n"
        "        api.kill('x')\n"
        "    except EngineError:\n"
        "        pass\n"
        "    try:\n"
        "        raise EngineError('x')\n"
        "    except Exception:\n"
        "        pass\n"
        "    try:\n"
        "        api.kill('x')\n"
        "    except EngineError:\n"
        "        pass\n"
        "    except Exception:\n"
        "        pass\n"
        "    try:\n"
        "        thread.start()\n"
        "    except Exception:\n"
        "        pass\n"
    )
    assert list(broad_catches_of_engine_calls(sample)) == [
        (5, "api.exec_inspect"),
        (9, "container_record"),
        (13, "self._client.api.kill"),
    ]
