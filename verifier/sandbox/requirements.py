"""Requirement lines an environment image may be built from, and the one rule for them.

Shared by `verifier review` (what a repository declares, `verifier.review.deps`) and suites
(`suite.toml` `requirements = [...]` or a suite folder's `requirements.txt`). Only names from
the package index are accepted: direct references (`pkg @ URL`, VCS, local paths) and pip
options (`-i`, `--index-url`, `-f`, ...) are refused with an error naming the line, because the
host downloads whatever the lines name. Nothing here runs or downloads anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.errors import InvalidInput

#: A requirement the index can answer: name, extras, version specifiers, an environment marker.
_SAFE_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,\s-]*\])?\s*[A-Za-z0-9<>=!~.*,\s_+-]*(;.*)?$"
)
#: Most requirement lines one suite may declare.
MAX_REQUIREMENTS = 100


class DependencyError(InvalidInput):
    """The declared dependencies cannot be used (refused, or not resolvable from the index)."""


def normalize(name: str) -> str:
    """A distribution name as the index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class DependencySpec:
    """Requirement lines for the package index, sorted and unique, and where they came from."""

    requirements: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def union(self, other: DependencySpec) -> DependencySpec:
        return DependencySpec(
            tuple(sorted(set(self.requirements) | set(other.requirements))),
            tuple(sorted(set(self.sources) | set(other.sources))),
        )


def check_requirement(req: str, where: str) -> str:
    """`req` (whitespace folded) if it names a package of the index, else DependencyError naming it."""
    text = " ".join(req.split())
    if not text:
        raise DependencyError(f"{where}: empty requirement")
    if text.startswith("-"):
        raise DependencyError(f"{where}: pip option {text.split()[0]!r} is refused: packages come from the index only")
    if "@" in text.split(";")[0] or "://" in text or text.startswith((".", "/", "~")):
        raise DependencyError(
            f"{where}: {text!r} is a direct reference (URL, VCS or path); only names from the package index are allowed"
        )
    if not _SAFE_REQUIREMENT.match(text):
        raise DependencyError(f"{where}: {text!r} is not a requirement of the package index")
    return text


def strip_line(raw: str) -> str:
    """A requirements-file line without its comment and `--hash` options."""
    line = re.sub(r"(^|\s)#.*$", "", raw).strip()
    return re.sub(r"\s--hash[=\s]\S+", "", line).strip()


def parse_lines(lines: list[str], where: str) -> DependencySpec:
    """A suite's requirement lines (`where`: the file, for messages), each checked; an option
    line (also `-r`/`-c`) is refused. Raises DependencyError naming the first refused line."""
    reqs: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = strip_line(raw)
        if line:
            reqs.append(check_requirement(line, f"{where}:{number}"))
    if len(reqs) > MAX_REQUIREMENTS:
        raise DependencyError(f"{where}: {len(reqs)} requirements, more than {MAX_REQUIREMENTS}")
    return DependencySpec(tuple(sorted(set(reqs))), (where,) if reqs else ())
