"""Requirement lines an environment image may be built from, and the one rule for them.

Shared by `verifier review` (what a repository declares, `verifier.review.deps`) and suites
(`suite.toml` `requirements = [...]` or a suite folder's `requirements.txt`). Each line is read
by `packaging` as PEP 508 says (`numpy (>=1.0)` is as good as `numpy>=1.0`). Only names from the
package index are accepted: direct references (`pkg @ URL`, VCS, local paths), pip options
anywhere on a line (`-i`, `--index-url`, `-f`, ..., also after the name: `numpy -f .`) and
environment variables (`${VAR}`, which pip expands) are refused with an error naming the line,
because the host downloads whatever the lines name. A suite's environment markers are evaluated
here, for the sandbox's interpreter (`SANDBOX_MARKERS`), never the host's: a line whose marker
is false is left out, and a set that ends up empty is refused naming its lines. Nothing here
runs or downloads anything.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from verifier.errors import InvalidInput

#: Most requirement lines one suite may declare.
MAX_REQUIREMENTS = 100
#: A pip option on a line: a word that starts with "-" (at the start or after whitespace).
_OPTION = re.compile(r"(?:^|\s)(-\S*)")
#: What pip expands in a requirements file (`${NAME}`): the host's environment, refused.
_ENV_VAR = re.compile(r"\$\{")


def _sandbox_markers() -> dict[str, str]:
    """The sandbox's interpreter as environment markers see it: the image's CPython 3.11 (Debian
    bookworm's 3.11.2 on the default base; python:3.11-slim on the registry base is a later
    3.11.x) on Linux, on this machine's architecture (containers run natively)."""
    machine = platform.machine() or "x86_64"
    return {
        "implementation_name": "cpython",
        "implementation_version": "3.11.2",
        "os_name": "posix",
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": "3.11.2",
        "python_version": "3.11",
        "sys_platform": "linux",
    }


SANDBOX_MARKERS: Mapping[str, str] = _sandbox_markers()


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


def _parsed(req: str, where: str) -> tuple[str, Requirement]:
    """(`req` with whitespace folded, its parse), or DependencyError naming the line."""
    text = " ".join(req.split())
    if not text:
        raise DependencyError(f"{where}: empty requirement")
    option = _OPTION.search(text)
    if option:
        raise DependencyError(
            f"{where}: pip option {option.group(1)!r} is refused (in {text!r}): packages come from the index only"
        )
    if _ENV_VAR.search(text):
        raise DependencyError(f"{where}: {text!r} names an environment variable (${{...}}), which pip would expand")
    if "://" in text or text.startswith((".", "/", "~")):
        raise DependencyError(
            f"{where}: {text!r} is a direct reference (URL, VCS or path); only names from the package index are allowed"
        )
    try:
        parsed = Requirement(text)
    except InvalidRequirement as exc:
        why = str(exc).splitlines()[0]
        raise DependencyError(f"{where}: {text!r} is not a requirement of the package index ({why})") from None
    if parsed.url is not None:
        raise DependencyError(
            f"{where}: {text!r} is a direct reference (URL, VCS or path); only names from the package index are allowed"
        )
    return text, parsed


def check_requirement(req: str, where: str) -> str:
    """`req` (whitespace folded) if it is a PEP 508 requirement naming a package of the index,
    else DependencyError naming it. Its marker, if any, is kept (see `for_sandbox`)."""
    return _parsed(req, where)[0]


def for_sandbox(req: str, where: str) -> str | None:
    """`req` as the sandbox's pip is to get it: checked (`check_requirement`), its marker
    evaluated for the sandbox's interpreter (`SANDBOX_MARKERS`) and removed; None when the
    marker is false there (the line does not apply)."""
    text, parsed = _parsed(req, where)
    if parsed.marker is None:
        return text
    try:
        applies = parsed.marker.evaluate(dict(SANDBOX_MARKERS))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName) as exc:
        raise DependencyError(f"{where}: {text!r}: its marker cannot be evaluated ({exc})") from None
    # The name, extras and versions, as written (a name-based requirement has no ";" before its marker).
    return " ".join(text.split(";", 1)[0].split()) if applies else None


def strip_line(raw: str) -> str:
    """A requirements-file line without its comment and `--hash` options (pip's hash checking:
    `--hash=sha256:<hex>`; anything else that looks like an option stays, and is refused)."""
    line = re.sub(r"(^|\s)#.*$", "", raw).strip()
    return re.sub(r"\s--hash(=|\s+)[A-Za-z0-9]+:[0-9A-Fa-f]+(?=\s|$)", "", line).strip()


def parse_lines(lines: list[str], where: str) -> DependencySpec:
    """A suite's requirement lines (`where`: the file, for messages), each checked, its marker
    evaluated for the sandbox (`for_sandbox`); an option line (also `-r`/`-c`) is refused.
    Raises DependencyError naming the first refused line, or every line when none applies."""
    reqs: list[str] = []
    left_out: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = strip_line(raw)
        if line:
            kept = for_sandbox(line, f"{where}:{number}")
            if kept is None:
                left_out.append(f"{where}:{number} {' '.join(line.split())!r}")
            else:
                reqs.append(kept)
    if len(reqs) + len(left_out) > MAX_REQUIREMENTS:
        raise DependencyError(f"{where}: {len(reqs) + len(left_out)} requirements, more than {MAX_REQUIREMENTS}")
    if left_out and not reqs:
        raise DependencyError(
            f"no requirement applies to the sandbox's Python {SANDBOX_MARKERS['python_version']} on "
            f"{SANDBOX_MARKERS['platform_system']} ({SANDBOX_MARKERS['platform_machine']}): every marker is false "
            f"({'; '.join(left_out[:3])}{'; ...' if len(left_out) > 3 else ''})"
        )
    return DependencySpec(tuple(sorted(set(reqs))), (where,) if reqs else ())
