"""What a tree declares: its dependencies, and the project itself (name, version, import roots).

Dependencies come from every place projects keep them, read as text (nothing of the repository
runs): ``pyproject.toml`` (``[project] dependencies``, test/dev extras and dependency groups),
``setup.cfg`` (``[options] install_requires``, ``[options.extras_require]``), ``setup.py``
(the literal ``install_requires`` / ``extras_require`` / ``tests_require`` of its ``setup()``
call, read from its syntax tree, never run), requirements files (``*requirements*.txt`` at the
root and ``.txt`` files in a root folder ``requirements*/``) and ``tox.ini`` (``[testenv] deps``),
or from one ``--requirements`` file instead. Where the project's own metadata is dynamic (computed
by setup.py, `dynamic = ["dependencies"]`, a backend's own table) it comes from its build backend
run in the sandbox instead (`verifier.review.backend_metadata`): `declared` and `project_info`
take that `BackendMetadata` in place of reading pyproject.toml, setup.cfg and setup.py.
Only names from the package index are accepted: direct URLs, local paths and pip options
that change where packages come from are refused with an error naming them, because the
host downloads whatever the spec names. Nothing here runs code of the repository.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement

from verifier.review.gitread import Entry
from verifier.review.setup_py import read_setup_call
from verifier.sandbox.environment import sandbox_pins
from verifier.sandbox.requirements import (
    SANDBOX_MARKERS,
    DependencyError,
    DependencySpec,
    check_requirement,
    normalize,
    strip_line,
)

if TYPE_CHECKING:
    from verifier.review.backend_metadata import BackendMetadata

__all__ = [
    "DependencyError",
    "DependencySpec",
    "EnvironmentProblem",
    "ProjectInfo",
    "declared",
    "from_file",
    "normalize",
    "project_info",
]


class EnvironmentProblem(DependencyError):
    """Both sides' tests cannot be collected for the same reason, which is not the change's (a
    module missing on both sides, a collection error already on the base): no verdict (exit 2)."""


#: Extras and dependency groups that hold what the tests need.
TEST_GROUPS = ("test", "tests", "testing", "dev", "develop", "development")
_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?")
_MAX_INCLUDES = 20


@dataclass(frozen=True)
class ProjectInfo:
    """The project under test as the sandbox installs it from the tree (by path, with metadata)."""

    name: str | None = None
    version: str | None = None
    entry_points: dict[str, dict[str, str]] = field(default_factory=dict)
    import_roots: tuple[str, ...] = ("",)


def _self_extras(req: str, project: str | None) -> list[str] | None:
    """Extras of a requirement that names the project itself, else None."""
    m = _NAME.match(req)
    if not m or project is None or normalize(m.group(1)) != normalize(project):
        return None
    return [e.strip() for e in (m.group(2) or "[]")[1:-1].split(",") if e.strip()]


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _pyproject(doc: dict[str, Any], *, runtime: bool, tests: bool) -> tuple[list[str], list[str]]:
    project = _table(doc, "project")
    name = project.get("name") if isinstance(project.get("name"), str) else None
    extras = _table(project, "optional-dependencies")
    groups = _table(doc, "dependency-groups")
    reqs: list[str] = []
    sources: list[str] = []
    seen_extras: set[str] = set()

    def add(items: object, where: str) -> None:
        if not isinstance(items, list):
            return
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("include-group"), str):
                add_group(item["include-group"])
                continue
            if not isinstance(item, str):
                raise DependencyError(f"pyproject.toml {where}: {item!r} is not a requirement")
            own = _self_extras(item, name)
            if own is not None:
                for extra in own:
                    add_extra(extra)
                continue
            reqs.append(check_requirement(item, f"pyproject.toml {where}"))

    def add_extra(extra: str) -> None:
        key = normalize(extra)
        if key in seen_extras:
            return
        seen_extras.add(key)
        for k, v in extras.items():
            if normalize(k) == key:
                add(v, f"[project.optional-dependencies] {k}")
                sources.append(f"pyproject.toml [project.optional-dependencies] {k}")

    def add_group(group: str) -> None:
        key = "group:" + normalize(group)
        if key in seen_extras:
            return
        seen_extras.add(key)
        for k, v in groups.items():
            if normalize(k) == normalize(group):
                add(v, f"[dependency-groups] {k}")
                sources.append(f"pyproject.toml [dependency-groups] {k}")

    if runtime and project.get("dependencies"):
        add(project.get("dependencies"), "[project] dependencies")
        sources.append("pyproject.toml [project] dependencies")
    if tests:
        for group in TEST_GROUPS:
            add_extra(group)
            add_group(group)
    return reqs, sources


def _requirements_file(
    files: Mapping[str, Entry], path: str, depth: int = 0, *, host_dir: Path | None = None
) -> list[str]:
    if depth > _MAX_INCLUDES:
        raise DependencyError(f"{path}: too many nested -r includes")
    if host_dir is not None:
        try:
            text = (host_dir / path).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            raise DependencyError(f"cannot read the requirements file {host_dir / path}: {exc}") from exc
    else:
        entry = files.get(path)
        if entry is None:
            raise DependencyError(f"{path} is included by a requirements file but is not in the tree")
        text = entry.data.decode("utf-8", "replace")
    out: list[str] = []
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    for number, raw in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        line = strip_line(raw)
        if not line:
            continue
        where = f"{path}:{number}"
        option = re.match(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$", line)
        if option:
            target = folder + option.group(2)
            if host_dir is None:  # a file of the tree: requirements/../docs/requirements.txt is docs/...
                target = posixpath.normpath(target)
                if target == ".." or target.startswith("../"):
                    raise DependencyError(f"{where}: includes {option.group(2)!r}, outside the tree")
                if _OTHER_PURPOSE.search(target):
                    continue  # a dev file's docs or lint include: left out, as those files are at the root
            out += _requirements_file(files, target, depth + 1, host_dir=host_dir)
            continue
        if line in (".", "-e .", "-e.", "--editable .", "--editable=.") or re.match(r"^-e\s+\.(\[.*\])?$", line):
            continue  # the project itself: installed from the tree under test
        if line.startswith("-"):
            raise DependencyError(f"{where}: pip option {line.split()[0]!r} is not supported by review")
        out.append(check_requirement(line, where))
    return out


#: Requirements files for other purposes than running the code and its tests.
_OTHER_PURPOSE = re.compile(r"doc|lint|typing|typecheck|mypy|release|publish|bench", re.IGNORECASE)


#: Root folders of tests that may keep the tests' own requirements (`tests/requirements.txt`).
_TEST_FOLDERS = ("test", "tests", "testing")


#: A Python version in a requirements file's name: requirements-tests38.txt, requirements-py3.11.txt.
_PYTHON_IN_NAME = re.compile(r"(?<!\d)(?:py)?3[._]?(\d{1,2})(?!\d)", re.IGNORECASE)


def _for_the_sandbox_python(paths: list[str]) -> list[str]:
    """Of requirements files whose paths differ only in a Python version (wcwidth's
    requirements-tests38.txt and -tests39.txt pin different versions of one package), the one for
    the sandbox's Python: the newest not newer than it, else the oldest."""
    sandbox_minor = int(SANDBOX_MARKERS["python_version"].split(".")[1])
    groups: dict[str, list[tuple[int, str]]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        found = _PYTHON_IN_NAME.search(name)
        key = path if found is None else f"{folder}/{name[: found.start()]}{{py}}{name[found.end() :]}"
        groups.setdefault(key, []).append((int(found.group(1)) if found else 0, path))
    out = []
    for members in groups.values():
        fit = [m for m in members if m[0] <= sandbox_minor]
        out.append((max(fit) if fit else min(members))[1])
    return sorted(out)


def requirements_files(files: Mapping[str, Entry]) -> list[str]:
    """The tree's requirements files: ``*requirements*.txt`` at the root or in a root test folder
    (``tests/requirements.txt``: the tests'), and the ``.txt`` files of a root folder
    ``requirements*/`` (docs, lint, typing and release ones left out); of files for several
    Python versions, the sandbox's (`_for_the_sandbox_python`)."""
    out = []
    for path in sorted(files):
        folder, _, name = path.rpartition("/")
        if not name.endswith(".txt") or _OTHER_PURPOSE.search(path):
            continue
        if ((not folder or folder in _TEST_FOLDERS) and "requirements" in name) or (
            folder.startswith("requirements") and "/" not in folder
        ):
            out.append(path)
    return _for_the_sandbox_python(out)


def _for_tests(path: str) -> bool:
    """Whether a requirements file is the tests' (its path says test, dev or ci) or the runtime's."""
    return re.search(r"test|dev|ci", path, re.IGNORECASE) is not None


def _literal(node: ast.expr | None, names: Mapping[str, ast.expr]) -> object:
    """A literal (strings, lists, tuples, dicts of them), following module-level names once."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _setup_py(source: bytes) -> dict[str, object]:
    """The literal keywords of setup.py's `setup(...)` call (read, never run)."""
    found = read_setup_call(source)
    if found is None or found.call is None:
        return {}
    return {k.arg: _literal(k.value, found.names) for k in found.call.keywords if k.arg}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _setup_files(files: Mapping[str, Entry], *, runtime: bool, tests: bool) -> tuple[list[str], list[str]]:
    """setup.cfg's `[options]` and setup.py's literal `setup()` keywords."""
    reqs: list[str] = []
    sources: list[str] = []
    if "setup.cfg" in files:
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(files["setup.cfg"].data.decode("utf-8", "replace"))
        except configparser.Error as exc:
            raise DependencyError(f"setup.cfg does not parse: {exc.__class__.__name__}") from exc
        if runtime and parser.has_option("options", "install_requires"):
            lines = _strings(parser.get("options", "install_requires"))
            reqs += [check_requirement(r.strip(), "setup.cfg [options] install_requires") for r in lines]
            sources.append("setup.cfg [options] install_requires")
        if tests and parser.has_section("options.extras_require"):
            for key, value in parser.items("options.extras_require"):
                if normalize(key) in TEST_GROUPS:
                    reqs += [check_requirement(r.strip(), f"setup.cfg [options.extras_require] {key}")
                             for r in _strings(value)]  # fmt: skip
                    sources.append(f"setup.cfg [options.extras_require] {key}")
    if "setup.py" in files:
        kw = _setup_py(files["setup.py"].data)
        if runtime and _strings(kw.get("install_requires")):
            reqs += [check_requirement(r, "setup.py install_requires") for r in _strings(kw["install_requires"])]
            sources.append("setup.py install_requires")
        if tests:
            if _strings(kw.get("tests_require")):
                reqs += [check_requirement(r, "setup.py tests_require") for r in _strings(kw["tests_require"])]
                sources.append("setup.py tests_require")
            extras = kw.get("extras_require")
            for key, value in extras.items() if isinstance(extras, dict) else ():
                if isinstance(key, str) and normalize(key) in TEST_GROUPS and _strings(value):
                    reqs += [check_requirement(r, f"setup.py extras_require {key}") for r in _strings(value)]
                    sources.append(f"setup.py extras_require {key}")
    return reqs, sources


def _tox_deps(files: Mapping[str, Entry]) -> tuple[list[str], list[str]]:
    """tox.ini's `[testenv] deps` (lines for every environment; factor-conditional lines and
    substitutions other than `{toxinidir}` are left out), and the requirements files it names."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(files["tox.ini"].data.decode("utf-8", "replace"))
    except configparser.Error as exc:
        raise DependencyError(f"tox.ini does not parse: {exc.__class__.__name__}") from exc
    if not parser.has_option("testenv", "deps"):
        return [], []
    out: list[str] = []
    named: list[str] = []
    for number, raw in enumerate(parser.get("testenv", "deps").splitlines(), 1):
        line = strip_line(raw.replace("{toxinidir}/", "").replace("{toxinidir}", "."))
        if not line or "{" in line or re.match(r"^[\w.,!-]+:\s", line):
            continue
        where = f"tox.ini [testenv] deps line {number}"
        include = re.match(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$", line)
        if include:
            named.append(include.group(2).removeprefix("./"))
            out += _requirements_file(files, named[-1])
        elif line in (".", "-e .", "-e.") or re.match(r"^-e\s+\.(\[.*\])?$", line):
            continue
        elif line.startswith("-"):
            raise DependencyError(f"{where}: pip option {line.split()[0]!r} is not supported by review")
        else:
            out.append(check_requirement(line, where))
    return out, named


def declared(
    files: Mapping[str, Entry], *, runtime: bool, tests: bool, metadata: BackendMetadata | None = None
) -> DependencySpec:
    """What `files` declares: its runtime dependencies (`runtime`) and what its tests need (`tests`).

    Requirements files count as the tests' when their path says test or dev, else as runtime;
    tox.ini's deps are the tests', and when they name a tests' requirements file, that file is
    the tests' (the root's other tests' files, a Python version's variants among them, are not
    read). With `metadata` (the build backend's), the project's own dependencies and test extras
    are its `Requires-Dist`, not pyproject.toml / setup.cfg / setup.py.
    """
    reqs: list[str] = []
    sources: list[str] = []
    if metadata is not None:
        extras = tuple(e for e in metadata.provides_extra if normalize(e) in TEST_GROUPS) if tests else ()
        found = metadata.requirements(runtime=runtime, extras=extras)
        reqs += found
        if found:
            sources.append(metadata.source)
    elif "pyproject.toml" in files:
        try:
            doc = tomllib.loads(files["pyproject.toml"].data.decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError as exc:
            raise DependencyError(f"pyproject.toml does not parse: {exc}") from exc
        r, s = _pyproject(doc, runtime=runtime, tests=tests)
        reqs += r
        sources += s
    if metadata is None:
        r, s = _setup_files(files, runtime=runtime, tests=tests)
        reqs += r
        sources += s
    tox, tox_files = _tox_deps(files) if tests and "tox.ini" in files else ([], [])
    tox_names_tests = any(_for_tests(path) for path in tox_files)
    for path in requirements_files(files):
        if not (tests if _for_tests(path) else runtime) or (_for_tests(path) and tox_names_tests):
            continue
        reqs += _requirements_file(files, path)
        sources.append(path)
    if tox:
        reqs += tox
        sources.append("tox.ini [testenv] deps")
    reqs, replaced = _the_sandbox_runs_the_tests(reqs)
    if replaced:
        said = ", ".join(replaced)
        sources.append(f"the sandbox's own {said} (the test runner's: the project's pins set aside)")
    return DependencySpec(tuple(sorted(set(reqs))), tuple(sorted(set(sources))))


def _the_sandbox_runs_the_tests(reqs: list[str]) -> tuple[list[str], list[str]]:
    """The requirements without those on the test runner's own packages (pytest, pluggy,
    iniconfig, Hypothesis, ... at the sandbox image's pins) that exclude the pinned version, and
    the pins used instead: the tests run under the sandbox's pytest, whatever a project's
    lock file pinned for its own (wcwidth's iniconfig==2.1.0 could not be installed beside it)."""
    pins = {normalize(pin.split("==")[0]): pin for pin in sandbox_pins()}
    kept: list[str] = []
    replaced: set[str] = set()
    for line in reqs:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            kept.append(line)
            continue
        pin = pins.get(normalize(req.name))
        if pin is not None and not req.specifier.contains(pin.split("==")[1], prereleases=True):
            replaced.add(pin)
        else:
            kept.append(line)
    return kept, sorted(replaced)


def from_file(path: Path) -> DependencySpec:
    """`--requirements FILE`: this file (and its -r includes) instead of what the trees declare."""
    if not path.is_file():
        raise DependencyError(f"the requirements file {path} does not exist")
    reqs = _requirements_file({}, path.name, host_dir=path.parent)
    return DependencySpec(tuple(sorted(set(reqs))), (f"--requirements {path.name}",))


def project_info(files: Mapping[str, Entry], metadata: BackendMetadata | None = None) -> ProjectInfo:
    """Name, version and entry points from pyproject.toml or setup.cfg (name and version from the
    build backend's `metadata` when given); src/ layout detection."""
    name: str | None = None
    version: str | None = None
    entry_points: dict[str, dict[str, str]] = {}
    if "pyproject.toml" in files:
        try:
            doc = tomllib.loads(files["pyproject.toml"].data.decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError:
            doc = {}
        project = _table(doc, "project")
        name = project.get("name") if isinstance(project.get("name"), str) else None
        version = project.get("version") if isinstance(project.get("version"), str) else None
        for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
            if _table(project, key):
                entry_points[group] = {str(k): str(v) for k, v in _table(project, key).items()}
        for group, entries in _table(project, "entry-points").items():
            if isinstance(entries, dict):
                entry_points[str(group)] = {str(k): str(v) for k, v in entries.items()}
    if name is None and "setup.cfg" in files:
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(files["setup.cfg"].data.decode("utf-8", "replace"))
            name = parser.get("metadata", "name", fallback=None)
            raw = parser.get("metadata", "version", fallback=None)
            version = raw if raw and not raw.strip().startswith(("attr:", "file:")) else None
        except configparser.Error:
            pass
    if name is None and "setup.py" in files:
        kw = _setup_py(files["setup.py"].data)
        found_name, found_version = kw.get("name"), kw.get("version")
        name = found_name if isinstance(found_name, str) else None
        version = found_version if isinstance(found_version, str) else None
    if metadata is not None:
        name, version = metadata.name or name, metadata.version or version
    src = any(p.startswith("src/") and p.endswith(".py") for p in files)
    return ProjectInfo(
        name=name, version=version, entry_points=entry_points, import_roots=("src", "") if src else ("",)
    )
