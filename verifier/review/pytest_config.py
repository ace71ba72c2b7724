"""pytest's configuration as pytest itself finds and reads it, from a tree held in memory.

The review runs pytest with the repository root as its rootdir (``--rootdir``) and as its
working directory. This module answers, for such a session, what pytest 9 would answer:

- `locate`: which file pytest takes its configuration from (`_pytest.config.findpaths`): from
  the common folder of the session's paths (the root when none are given) up to the root, the
  first of ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``, ``.pytest.ini`` (always, even
  empty), ``pyproject.toml`` (``[tool.pytest]`` or ``[tool.pytest.ini_options]``), ``tox.ini``
  (``[pytest]``), ``setup.cfg`` (``[tool:pytest]``) that holds a pytest configuration; else a
  ``pyproject.toml`` on that way, with no options.
- `PytestConfig`: the options the review needs (``python_files``, ``python_classes``,
  ``python_functions``, ``testpaths``, ``norecursedirs``, ``addopts``), with pytest's defaults.
- `glob`: a ``testpaths`` entry expanded as pytest does (``glob.iglob(..., recursive=True)``).

TOML is read with `tomllib`, INI files with `configparser` set up as pytest's parser behaves
(keys keep their case, no ``DEFAULT`` section, no interpolation, no inline comments, a
duplicate key is an error). Nothing of the repository runs. A file pytest could not parse
is recorded as the configuration with its `problem`: pytest refuses to start on it, and the
run then says so.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from verifier.errors import VerifierError
from verifier.review.gitread import MODE_LINK, Entry
from verifier.runner.review_protocol import WORK_DIR

#: The files pytest reads its configuration from, in its order of precedence.
CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
#: Files that are pytest's configuration even without a pytest section.
_DEDICATED = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
DEFAULTS: Mapping[str, tuple[str, ...]] = {
    "python_files": ("test_*.py", "*_test.py"),
    "python_classes": ("Test",),
    "python_functions": ("test",),
    "testpaths": (),
    "norecursedirs": ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"),
    "addopts": (),
}


class ConfigError(VerifierError, ValueError):
    """A configuration file pytest would refuse to start with."""


def _ini(text: str, section: str) -> dict[str, object] | None:
    parser = configparser.RawConfigParser(
        strict=True, interpolation=None, default_section="\0none", comment_prefixes=("#", ";")
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # pytest's keys keep their case
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ConfigError(" ".join(str(exc).split())[:200]) from None
    return dict(parser.items(section)) if parser.has_section(section) else None


def _toml(text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(exc)[:200]) from None


def _tool_pytest(doc: Mapping[str, object]) -> dict[str, object] | None:
    tool = doc.get("tool")
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    native = {k: v for k, v in table.items() if k != "ini_options"}
    ini = table.get("ini_options")
    if native and ini is not None:
        raise ConfigError("both [tool.pytest] and [tool.pytest.ini_options]")
    if native:
        return native
    return dict(ini) if isinstance(ini, dict) else None


def load(name: str, data: bytes) -> dict[str, object] | None:
    """The pytest options in the config file called `name` (a base name of `CONFIG_FILES`), or
    None when the file holds no pytest configuration. ConfigError when pytest could not parse it."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    if name.endswith(".toml"):
        doc = _toml(text)
        if name == "pyproject.toml":
            return _tool_pytest(doc)
        table = doc.get("pytest")
        return dict(table) if isinstance(table, dict) else {}
    if name == "setup.cfg":
        found = _ini(text, "tool:pytest")
        if found is None and _ini(text, "pytest") is not None:
            raise ConfigError("setup.cfg: a [pytest] section is no longer supported, use [tool:pytest]")
        return found
    found = _ini(text, "pytest")
    return found if found is not None or name not in _DEDICATED else {}


def _data(files: Mapping[str, Entry], path: str) -> bytes | None:
    """A file's bytes as pytest would open it: a symlink is followed within the tree."""
    for _ in range(8):
        entry = files.get(path)
        if entry is None or entry.mode != MODE_LINK:
            return None if entry is None else entry.data
        target = entry.data.decode("utf-8", "surrogateescape")
        if target.startswith("/"):
            return None
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if path.startswith("../") or path == "..":
            return None
    return None


@dataclass(frozen=True)
class PytestConfig:
    """The configuration one pytest session reads: its file (a tree path) and its options."""

    inifile: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    problem: str = ""

    def get(self, name: str) -> tuple[str, ...]:
        """An option of pytest's ``args`` type (a list, or a string split as a shell would)."""
        value = self.options.get(name)
        if value is None:
            return DEFAULTS.get(name, ())
        if isinstance(value, list):
            return tuple(str(v) for v in value)
        try:
            return tuple(shlex.split(str(value)))
        except ValueError:
            return tuple(str(value).split())

    @property
    def section(self) -> Mapping[str, object] | None:
        """What to compare between two trees: the options, or the problem."""
        return {"problem": self.problem} if self.problem else self.options


def locate(files: Mapping[str, Entry], start: str = "") -> PytestConfig:
    """The configuration pytest finds for a session whose paths have the common folder `start`."""
    fallback: str | None = None
    folder = start.strip("/")
    while True:
        for name in CONFIG_FILES:
            path = f"{folder}/{name}" if folder else name
            data = _data(files, path)
            if data is None:
                continue
            if name == "pyproject.toml" and fallback is None:
                fallback = path
            try:
                options = load(name, data)
            except ConfigError as exc:
                return PytestConfig(inifile=path, problem=f"{path}: {exc}")
            if options is not None:
                return PytestConfig(inifile=path, options=options)
        if not folder:
            return PytestConfig(inifile=fallback)
        folder = posixpath.dirname(folder)


def common_folder(paths: Iterable[str], files: Mapping[str, Entry]) -> str:
    """pytest's common ancestor of the session's paths (a file counts as its folder)."""
    folders = []
    for p in paths:
        folders.append(posixpath.dirname(p) if p in files else p)
    if not folders:
        return ""
    common = posixpath.commonpath([f"/{f}" for f in folders]).strip("/")
    return common


def fnmatch_ex(pattern: str, path: str) -> bool:
    """pytest's `fnmatch_ex` for a tree path, as the session sees it (under the work folder): a
    pattern without a slash matches the base name, one with a slash the whole path."""
    if "/" not in pattern:
        return fnmatch.fnmatch(posixpath.basename(path), pattern)
    return fnmatch.fnmatch(f"{WORK_DIR}/{path}", f"*/{pattern}")


def all_paths(files: Iterable[str]) -> set[str]:
    """Every file and folder of a tree, as tree paths."""
    out: set[str] = set()
    for path in files:
        out.add(path)
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            out.add(path)
    return out


def glob(pattern: str, paths: set[str]) -> list[str]:
    """`glob.glob(pattern, recursive=True)` from the root, on a tree's paths (sorted, as pytest)."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    want_dir = pattern.endswith("/")
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts or pattern.startswith("/") or ".." in parts:
        return []
    found = sorted(p for p in paths if _glob_match(parts, p.split("/")))
    if want_dir:
        found = [p for p in found if any(q.startswith(p + "/") for q in paths)]
    return found


def _glob_match(parts: list[str], segments: list[str]) -> bool:
    if not parts:
        return not segments
    head, rest = parts[0], parts[1:]
    if head == "**":
        # Zero or more folders; like glob, '**' does not enter hidden folders.
        if _glob_match(rest, segments):
            return True
        return bool(segments) and not segments[0].startswith(".") and _glob_match(parts, segments[1:])
    if not segments:
        return False
    seg = segments[0]
    magic = any(c in head for c in "*?[")
    if magic and seg.startswith(".") and not head.startswith("."):
        return False  # glob's wildcards skip hidden names
    ok = fnmatch.fnmatchcase(seg, head) if magic else seg == head
    return ok and _glob_match(rest, segments[1:])
