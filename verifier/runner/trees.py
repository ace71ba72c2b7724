"""A candidate folder's one canonical form, and the module names a candidate may take.

Standard library only: the host (`verifier.inputs`, `verifier.suite`, `verifier.verify`) and
the runner (`trusted.py`, as defence in depth) import this module, so both apply one rule.

**Canonical form.** A tree is a mapping of relative POSIX paths to bytes. A path is canonical
when it is valid Unicode in normal form NFC; its components are separated by single `/`, with
no empty, `.` or `..` component (so no leading or trailing `/`); no component ends in a space
or a dot (names Windows disks treat as another name); it holds no backslash, no control,
format or line/paragraph-separator character (NUL, newline, escape, zero-width and
bidirectional marks); each component is at most `MAX_NAME_BYTES` bytes of UTF-8, and the
path under `CANDIDATE_DIR` at most `MAX_PATH_BYTES` (what the sandbox's file system can
create). A tree is canonical when its paths are, and no two of them alias: none is equal to
another, or to a folder on another's way, when compared without case and Unicode
compatibility differences (`fold`, the way a case-insensitive or normalising disk compares
them); no module is defined twice (`m.py` beside a package or namespace folder `m/` with
Python files); and no file is compiled code (`.pyc`, `.pyo`, `.so`, `.pyd`) or sits in a
`__pycache__` folder: the source is what a reader sees, so it is what runs. A tree that is not
canonical is refused, never repaired: `tree_problem` says why and names the path.

**Module names.** The tests may import only the modules the suite declares (`modules`, else
`module`, in `suite.toml`); any other module of a candidate folder is importable from the
candidate's own code only. A top-level name of a candidate folder (a `.py` file or a folder
at its top) may not be one that the standard library, the sandbox image
(`protocol.IMAGE_MODULES`), pytest or the interpreter (`SPECIAL_MODULES`) define, nor one the
suite folder defines or uses (its modules, packages and namespace folders, `conftest`, its
`pytest_plugins`, and every module it imports, also optionally), nor one of the packages of the
suite's environment (its `requirements`, installed in an environment image): `module_conflict`.
Names are compared with `fold` too.
"""

from __future__ import annotations

import ast
import functools
import sys
import unicodedata
from collections.abc import Iterable, Mapping

from .protocol import CANDIDATE_DIR, IMAGE_MODULES

#: Longest file or folder name the sandbox's file system creates (NAME_MAX), in bytes of UTF-8.
MAX_NAME_BYTES = 255
#: Longest path under CANDIDATE_DIR (PATH_MAX is 4096 bytes with its NUL), in bytes of UTF-8.
MAX_PATH_BYTES = 4095 - len(CANDIDATE_DIR) - 1
#: Suffixes of compiled code the import system would load instead of (or beside) a source file.
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
#: Names pytest or the interpreter treat specially, never a candidate's module.
SPECIAL_MODULES = frozenset({"conftest", "sitecustomize", "usercustomize"})
#: The standard library of the image's Python 3.11 that newer interpreters (the host's, perhaps)
#: no longer list in `sys.stdlib_module_names`.
_STDLIB_311_ONLY = frozenset(
    {
        "aifc", "asynchat", "asyncore", "audioop", "cgi", "cgitb", "chunk", "crypt", "distutils", "imghdr",
        "imp", "lib2to3", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes", "smtpd", "sndhdr",
        "spwd", "sunau", "telnetlib", "uu", "xdrlib", "_crypt", "_msi", "_bootsubprocess",
    }
)  # fmt: skip
STDLIB_MODULES = frozenset(sys.stdlib_module_names) | _STDLIB_311_ONLY
#: Unicode categories refused in a path: control, format (zero-width, bidirectional marks),
#: surrogate, line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def fold(name: str) -> str:
    """`name` as a case-insensitive, normalising disk (or Python's NFKC identifiers) sees it."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def path_problem(path: object) -> str | None:
    """Why `path` is not a canonical path (trusted words, never the path itself), or None."""
    if not isinstance(path, str):
        return "a path that is not text"
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        return "a path that is not valid Unicode (not UTF-8)"
    if not path:
        return "an empty path"
    if "\\" in path:
        return "a path with a backslash (a Windows separator; use '/')"
    bad = next((ch for ch in path if unicodedata.category(ch) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        return f"a path with a control or invisible character (U+{ord(bad):04X})"
    if path.startswith("/"):
        return "an absolute path"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return f"a path with {'an empty' if not part else 'a ' + repr(part)} component (not normalised)"
        if part.endswith((" ", ".")):
            return "a path with a name that ends in a space or a dot (another name's alias on some disks)"
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            return f"a path with a name longer than {MAX_NAME_BYTES} bytes (the sandbox cannot create it)"
    if len(encoded) > MAX_PATH_BYTES:
        return f"a path longer than {MAX_PATH_BYTES} bytes (the sandbox cannot create it)"
    if unicodedata.normalize("NFC", path) != path:
        return "a path not in Unicode normal form NFC (an alias of its NFC form)"
    return None


def tree_problem(paths: Iterable[object]) -> tuple[str, tuple[str, ...]] | None:
    """(why, the paths concerned) when these paths are not a canonical tree (see the module's
    docstring), or None. `why` is trusted text; the paths are the candidate's, untrusted."""
    listed = list(paths)
    for path in listed:
        why = path_problem(path)
        if why is not None:
            return why, (str(path),)
    names = [str(p) for p in listed]
    for path in names:
        if "__pycache__" in path.split("/")[:-1] or path.endswith(COMPILED_SUFFIXES):
            return "compiled code (a .pyc, .so or __pycache__ file): ship the source, which is what runs", (path,)
    files: dict[str, str] = {}
    folders: dict[str, str] = {}
    for path in sorted(names):
        key = fold(path)
        if key in files:
            return "two paths that are one file on a case-insensitive or normalising disk", (files[key], path)
        files[key] = path
        parts = key.split("/")
        for i in range(1, len(parts)):
            folders.setdefault("/".join(parts[:i]), path)
    for key, path in files.items():
        if key in folders:
            return "a path that is both a file and a folder", (path, folders[key])
    modules: dict[str, str] = {}
    packages: dict[str, str] = {}
    for key, path in files.items():
        if key.endswith(".py"):
            modules.setdefault(key[:-3], path)
            parts = key.split("/")
            for i in range(1, len(parts)):
                packages.setdefault("/".join(parts[:i]), path)
    for key, path in sorted(modules.items()):
        if key in packages:
            why = "a module defined twice: a .py file and a package (or namespace) folder of one name"
            return why, (path, packages[key])
    return None


def shown(paths: Iterable[str], limit: int = 300) -> str:
    """The candidate's paths for an untrusted detail: each quoted, each at most `limit` characters."""
    listed = [repr(p[:limit]) for p in paths]
    return f"the path{'s' if len(listed) > 1 else ''}: {', '.join(listed)}"


def _top_names(paths: Iterable[str]) -> dict[str, str]:
    """fold(top-level name) -> a path that makes it importable: a `.py` file at the top, or a
    folder at the top (a package, or a namespace package)."""
    names: dict[str, str] = {}
    for path in sorted(paths):
        top, _, rest = path.partition("/")
        if rest:
            names.setdefault(fold(top), path)
        elif top.endswith(".py"):
            names.setdefault(fold(top[:-3]), path)
    return names


@functools.cache
def _reserved() -> dict[str, str]:
    table: dict[str, str] = {}
    for names, whose in (
        (SPECIAL_MODULES, "a name pytest or the interpreter treat specially"),
        (IMAGE_MODULES, "a package of the sandbox image"),
        (STDLIB_MODULES, "the standard library's"),
    ):
        for name in sorted(names):
            table.setdefault(fold(name), f"{name!r}, {whose}")
    return table


def reserved(name: str) -> str | None:
    """Why a top-level module `name` belongs to the sandbox (trusted words: our own spelling of
    the name and whose it is), or None."""
    return _reserved().get(fold(name))


def _literal_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [n for elt in node.elts for n in _literal_names(elt)]
    return []


#: Calls whose first argument names a module the suite imports (by its last attribute or name).
_IMPORTING_CALLS = frozenset({"import_module", "__import__", "importorskip", "find_spec", "find_loader"})


def _used_modules(source: bytes) -> set[str]:
    """Modules a suite file imports (any import, also inside a try or a function), names in
    its `pytest_plugins`, and modules named to importlib / `pytest.importorskip`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets) and node.value is not None:
                found.update(_literal_names(node.value))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in _IMPORTING_CALLS:
                found.update(_literal_names(node.args[0]))
    return {name.split(".")[0] for name in found if name}


def suite_names(files: Mapping[str, bytes]) -> dict[str, str]:
    """fold(name) -> the name, for every top-level module the suite folder defines or uses."""
    names = {key: path.partition("/")[0].removesuffix(".py") for key, path in _top_names(files).items()}
    for path, data in files.items():
        if path.endswith(".py"):
            for name in _used_modules(data):
                names.setdefault(fold(name), name)
    return names


def declared_tops(declared: Iterable[str]) -> set[str]:
    """fold() of the top-level names of the modules a suite declares as the candidate's."""
    return {fold(name.split(".")[0]) for name in declared}


def module_conflict(
    paths: Iterable[str],
    suite_files: Mapping[str, bytes],
    declared: Iterable[str],
    environment: Iterable[str] = (),
) -> tuple[str, tuple[str, ...]] | None:
    """(why, the candidate's path) when a candidate folder takes a name it may not (see the
    module's docstring), or None. `why` names the module in the sandbox's or the suite's own
    spelling (trusted text); the candidate's path stays untrusted. Names the suite merely
    imports are the candidate's to take when the suite declares them (it imports its candidate).
    `environment`: the top-level modules of the suite's packages (its environment image), which
    no candidate module may take either."""
    tops = _top_names(paths)
    defined = _top_names(suite_files)
    used = suite_names(suite_files)
    mine = declared_tops(declared)
    packages = {fold(name): name for name in environment}
    for key, path in sorted(tops.items()):
        whose = reserved(key)
        if whose is not None:
            return f"a module named like {whose}, which it may not replace", (path,)
        if key in packages:
            return (
                f"a module named like {packages[key]!r}, a package of the suite's environment, "
                "which it may not replace",
                (path,),
            )
        if key in defined:
            name = defined[key].partition("/")[0].removesuffix(".py")
            return f"a module named like the suite's own {name!r}, which it may not replace", (path,)
        if key in used and key not in mine:
            return (
                f"a module named like {used[key]!r}, which the suite imports and does not declare as the candidate's",
                (path,),
            )
    return None


def footprint(files: Mapping[str, bytes], page: int = 4096) -> int:
    """Bytes the files take on the sandbox's tmpfs (each file in whole pages)."""
    return sum(-(-len(data) // page) * page for data in files.values())
