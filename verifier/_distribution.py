"""The distribution's name on the package index and its version, for install hints.

The import package and the command are `verifier`; the distribution is not, because
`verifier` on the index is an unrelated project. tests/packaging checks this against
pyproject.toml.
"""

from __future__ import annotations

DISTRIBUTION = "sandboxed-verifier"

#: The version (pyproject.toml reads it from here). A leaf module: every module that names the
#: version imports it from here, so none imports the package `verifier` above it.
__version__ = "0.1.0"


def install_hint(extra: str | None = None) -> str:
    """The pip command that installs verifier (with `extra`), e.g. pip install 'sandboxed-verifier[agents]'.

    Plain text: escape it (rich.markup.escape) before printing it through rich markup.
    """
    target = f"{DISTRIBUTION}[{extra}]" if extra else DISTRIBUTION
    return f"pip install '{target}'"
