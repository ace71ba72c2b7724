"""What a tree declares: its dependencies, and the project itself (name, version, import roots).

Dependencies come from ``pyproject.toml`` (``[project] dependencies``, test/dev extras and
dependency groups) or ``requirements*.txt``, or from one ``--requirements`` file instead.
Only names from the package index are accepted: direct URLs, local paths and pip options
that change where packages come from are refused with an error naming them, because the
host downloads whatever the spec names. Nothing here runs code of the repository.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.review.gitread import Entry
from verifier.sandbox.requirements import DependencyError, DependencySpec, check_requirement, normalize, strip_line

__all__ = ["DependencyError", "DependencySpec", "ProjectInfo", "declared", "from_file", "normalize", "project_info"]

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
            out += _requirements_file(files, target, depth + 1, host_dir=host_dir)
            continue
        if line in (".", "-e .", "-e.", "--editable .", "--editable=.") or re.match(r"^-e\s+\.(\[.*\])?$", line):
            continue  # the project itself: installed from the tree under test
        if line.startswith("-"):
            raise DependencyError(f"{where}: pip option {line.split()[0]!r} is not supported by review")
        out.append(check_requirement(line, where))
    return out


def declared(files: Mapping[str, Entry], *, runtime: bool, tests: bool) -> DependencySpec:
    """What `files` declares: its runtime dependencies (`runtime`) and what its tests need (`tests`).

    Requirements files count as the tests' when their path says test or dev, else as runtime.
    """
    reqs: list[str] = []
    sources: list[str] = []
    if "pyproject.toml" in files:
        try:
            doc = tomllib.loads(files["pyproject.toml"].data.decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError as exc:
            raise DependencyError(f"pyproject.toml does not parse: {exc}") from exc
        r, s = _pyproject(doc, runtime=runtime, tests=tests)
        reqs += r
        sources += s
    for path in sorted(files):
        name = path.rsplit("/", 1)[-1]
        top = "/" not in path or (path.count("/") == 1 and path.startswith("requirements/"))
        if not (top and name.startswith("requirements") and name.endswith(".txt")):
            continue
        if not (tests if re.search(r"test|dev", path) else runtime):
            continue
        reqs += _requirements_file(files, path)
        sources.append(path)
    return DependencySpec(tuple(sorted(set(reqs))), tuple(sorted(set(sources))))


def from_file(path: Path) -> DependencySpec:
    """`--requirements FILE`: this file (and its -r includes) instead of what the trees declare."""
    if not path.is_file():
        raise DependencyError(f"the requirements file {path} does not exist")
    reqs = _requirements_file({}, path.name, host_dir=path.parent)
    return DependencySpec(tuple(sorted(set(reqs))), (f"--requirements {path.name}",))


def project_info(files: Mapping[str, Entry]) -> ProjectInfo:
    """Name, version and entry points from pyproject.toml or setup.cfg; src/ layout detection."""
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
    src = any(p.startswith("src/") and p.endswith(".py") for p in files)
    return ProjectInfo(
        name=name, version=version, entry_points=entry_points, import_roots=("src", "") if src else ("",)
    )
