"""The latest candidate, read from the working agent's own `DockerSandbox` at grading time.

`SandboxFile(sandbox, "/workspace/solution.py")` is a candidate reader for `verified_rubric`:
each grading pass (and the gate, `decide`) downloads the file's current bytes from the agent's
container, so the evidence's `candidate_sha256` is the SHA-256 of the bytes on the agent's disk
at that moment, and an edit after the last grading makes the gate reject the run as stale.
`SandboxFiles(sandbox, "/workspace/pkg")` does the same for a multi-file candidate: every file
under the folder, and `candidate_sha256` is its tree digest.

The verification itself never runs in the agent's container: the evidence tool sends those
bytes to a fresh verifier container (its own image, suite and runner), so an agent that plants
files (a `conftest.py`, a fake `pytest`) or tampers with its workspace cannot touch the judge.
The download runs as a user the agent's processes cannot signal or trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deepagents.backends.protocol import FILE_NOT_FOUND, IS_DIRECTORY, PERMISSION_DENIED

from verifier.agents.candidates import NoCandidate
from verifier.agents.sandbox.box import WORKSPACE, DockerSandbox

#: The download protocol's own error codes: the only sandbox answers a reason names.
_CODES = frozenset({FILE_NOT_FOUND, IS_DIRECTORY, PERMISSION_DENIED})


@dataclass(frozen=True)
class SandboxFile:
    """The candidate is a file in the agent's DockerSandbox, e.g.
    `SandboxFile(sandbox, "/workspace/solution.py")` (a path relative to the workspace works too)."""

    sandbox: DockerSandbox
    path: str = f"{WORKSPACE}/solution.py"

    def __call__(self, state: Mapping[str, Any]) -> str | None:
        """The file's text as it is on the agent's disk now (the state is not consulted)."""
        [response] = self.sandbox.download_files([self.path])
        if response.error is not None or response.content is None:
            error = str(response.error)
            raise NoCandidate(self._why(error), untrusted="" if error in _CODES else f"the sandbox said: {error}")
        try:
            return response.content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NoCandidate(
                f"{self.path} in the agent's sandbox is not UTF-8 text (a bad byte at offset {exc.start})"
            ) from None

    def _why(self, error: str) -> str:
        where = f"the agent's sandbox ({self.sandbox.id})"
        if error == FILE_NOT_FOUND:
            return (
                f"{where} has no {self.path}: the working model has not written it yet, or wrote another "
                "path (point SandboxFile at the file it writes)"
            )
        if error == IS_DIRECTORY:
            return (
                f"{self.path} in {where} is a folder: use SandboxFiles(sandbox, {self.path!r}) for a "
                "multi-file candidate, or point SandboxFile at the module file"
            )
        if error == PERMISSION_DENIED:
            return (
                f"{self.path} in {where} cannot be read by the grader: it is outside the workspace, a "
                "symlink that leaves it, or not readable by other users (its mode)"
            )
        return f"{self.path} could not be read from {where} (the sandbox's answer is in the untrusted detail)"


@dataclass(frozen=True)
class SandboxFiles:
    """The candidate is every file under a folder in the agent's DockerSandbox (a package, or
    several modules), e.g. `SandboxFiles(sandbox, "/workspace/src")`; caches are left out."""

    sandbox: DockerSandbox
    folder: str = WORKSPACE

    def __call__(self, state: Mapping[str, Any]) -> dict[str, str] | None:
        """The folder's files as they are on the agent's disk now, relative path -> text."""
        where = f"the agent's sandbox ({self.sandbox.id})"
        response = self.sandbox.download_folder(self.folder)
        if response.files is None:
            if response.error == FILE_NOT_FOUND:
                raise NoCandidate(f"{where} has no folder {self.folder}: point SandboxFiles at the one it writes")
            raise NoCandidate(
                f"the folder {self.folder} in {where} cannot be read: {response.error}", untrusted=response.detail
            )
        texts: dict[str, str] = {}
        for path, data in response.files.items():
            try:
                texts[path] = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise NoCandidate(
                    f"a file under {self.folder} in {where} is not UTF-8 text (a bad byte at offset {exc.start})",
                    untrusted=f"the file: {path}",
                ) from None
        if not any(path.endswith(".py") for path in texts):
            raise NoCandidate(f"{where} has no Python file under {self.folder}; point SandboxFiles at the right folder")
        return texts
