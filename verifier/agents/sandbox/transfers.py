"""The file operations of an agent's sandbox (`SandboxFiles`, a part of `DockerSandbox`):
`upload_files`, `download_files` and `download_folder`, each one run of a program of `files` in
the container, confined to the workspace and /tmp, and never raising.

The bytes travel over an exec's stdin (upload, as the agent's user) or stdout (downloads, as a
user the agent cannot tamper with); `files` holds the programs and reads their answers, and
`DockerSandbox._program` runs them (`box`).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from deepagents.backends.protocol import FileDownloadResponse, FileUploadResponse

from verifier.agents.sandbox.commands import ExecOutcome
from verifier.agents.sandbox.files import (
    DOWNLOAD,
    FOLDER,
    UPLOAD,
    Place,
    describe,
    download_results,
    folder_results,
    upload_results,
    upload_stream,
)
from verifier.agents.sandbox.identity import AGENT_UID, KEEPER_UID
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.hashing import SKIP_DIRS
from verifier.inputs import MAX_TREE_BYTES, MAX_TREE_FILES
from verifier.limits import MiB
from verifier.sandbox.container import EngineError
from verifier.text import one_line

#: Longest a file transfer may take inside the container.
TRANSFER_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class FolderDownloadResponse:
    """Every file under a folder of the sandbox (`download_folder`), or why not."""

    path: str
    """The folder that was asked for."""
    files: dict[str, bytes] | None = None
    """Relative POSIX path -> bytes; None on failure."""
    error: str | None = None
    """A protocol error code (`file_not_found`, `permission_denied`, ...) or a sentence from fixed
    templates (never a name the agent chose); None on success."""
    detail: str = ""
    """What the agent controls about the failure (the name of the file at fault, the reading
    program's complaint): untrusted text, never to be shown as the verifier's own words."""


class SandboxFiles:
    """Files in and out of a sandbox: what `DockerSandbox` inherits for `upload_files`,
    `download_files` and `download_folder`. The sandbox provides where a path may point
    (`place`), its limits, whether it is `closed`, and `_program`, one run of a file program."""

    place: Place
    limits: AgentSandboxLimits

    @property
    @abstractmethod
    def closed(self) -> bool:
        """Whether this object is done with the sandbox (nothing is sent then)."""

    @abstractmethod
    def _program(self, program: str, args: Sequence[str], *, user: int, stdin: bytes, cap: int) -> ExecOutcome:
        """Run one of the file programs; the engine's errors come out as EngineError."""

    def _roots(self) -> str:
        return json.dumps(list(self.place.roots))

    def _describe(self, code: str, size: int = 0) -> str:
        return describe(code, size=size, limit=self.limits.file_size_bytes, workspace_bytes=self.limits.workspace_bytes)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Write files over an exec's stdin, as the agent's user (who then owns them).

        Paths outside the workspace and /tmp are `permission_denied`, `..` is `invalid_path`,
        a symlink that leaves them is `permission_denied`; a file over `limits.file_size_bytes` is
        refused before it is sent. Never raises: every file gets its response, in order.
        """
        responses = [FileUploadResponse(path=path) for path, _ in files]
        batch: list[tuple[int, str, bytes]] = []
        for index, (path, content) in enumerate(files):
            where, error = self.place.confine(path)
            if where is None:
                responses[index] = FileUploadResponse(path=path, error=error)
            elif len(content) > self.limits.file_size_bytes:
                responses[index] = FileUploadResponse(path=path, error=self._describe("too_large", len(content)))
            else:
                batch.append((index, where, bytes(content)))
        if not batch:
            return responses
        results: dict[int, str | None] = {}
        failure = "the sandbox is closed"
        if not self.closed:
            try:
                stdin = upload_stream(batch)
                outcome = self._program(UPLOAD, [self._roots()], user=AGENT_UID, stdin=stdin, cap=1 * MiB)
                results = upload_results(outcome.stdout)
                failure = one_line(outcome.stderr.decode("utf-8", "replace"), 200) or "no answer from the sandbox"
            except EngineError as exc:
                failure = one_line(str(exc), 200)
        for index, _, data in batch:
            code = results.get(index, f"failed: {failure}")
            error = None if code is None else self._describe(code, len(data))
            responses[index] = FileUploadResponse(path=files[index][0], error=error)
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """Read files over an exec's stdout, as a user the agent cannot tamper with.

        The same confinement as `upload_files`; a directory is `is_directory`, a missing file
        `file_not_found`, a file over `limits.file_size_bytes` an error naming its size. Never raises.
        """
        responses = [FileDownloadResponse(path=path) for path in paths]
        batch: list[tuple[int, str]] = []
        for index, path in enumerate(paths):
            where, error = self.place.confine(path)
            if where is None:
                responses[index] = FileDownloadResponse(path=path, error=error)
            else:
                batch.append((index, where))
        if not batch:
            return responses
        results: dict[int, tuple[str | None, int, bytes]] = {}
        failure = "the sandbox is closed"
        if not self.closed:
            stdin = json.dumps([where for _, where in batch]).encode()
            cap = len(batch) * (self.limits.file_size_bytes + 4096)
            try:
                outcome = self._program(
                    DOWNLOAD, [self._roots(), str(self.limits.file_size_bytes)], user=KEEPER_UID, stdin=stdin, cap=cap
                )
                results = download_results(outcome.stdout)
                failure = one_line(outcome.stderr.decode("utf-8", "replace"), 200) or "no answer from the sandbox"
            except EngineError as exc:
                failure = one_line(str(exc), 200)
        for position, (index, _) in enumerate(batch):
            found = results.get(position)
            if found is None:
                responses[index] = FileDownloadResponse(path=paths[index], error=f"not read: {failure}")
                continue
            code, size, data = found
            if code is None:
                responses[index] = FileDownloadResponse(path=paths[index], content=data)
            else:
                responses[index] = FileDownloadResponse(path=paths[index], error=self._describe(code, size))
        return responses

    def download_folder(
        self, path: str, *, max_files: int = MAX_TREE_FILES, max_bytes: int = MAX_TREE_BYTES
    ) -> FolderDownloadResponse:
        """Every file under a folder (caches such as `__pycache__` and `*.pyc` left out), read
        like `download_files`. A folder holding a symlink, or more than `max_files` files or
        `max_bytes` bytes, is refused with a reason. Never raises."""
        where, error = self.place.confine_folder(path)
        if where is None:
            return FolderDownloadResponse(path=path, error=error)
        if self.closed:
            return FolderDownloadResponse(path=path, error="not read: the sandbox is closed")
        args = [self._roots(), where, str(max_files), str(max_bytes), json.dumps(sorted(SKIP_DIRS))]
        try:
            outcome = self._program(FOLDER, args, user=KEEPER_UID, stdin=b"", cap=max_bytes + 1024 * (max_files + 2))
        except EngineError as exc:
            return FolderDownloadResponse(path=path, error=f"not read: {one_line(str(exc), 200)}")
        files, failed = folder_results(outcome.stdout)
        if failed is None:
            return FolderDownloadResponse(path=path, files=files)
        code, inner = failed["error"], failed["path"]
        detail = f"the file at fault: {inner}" if inner else ""
        if code == "symlink":
            reason = "the folder holds a symbolic link; copy the file instead"
        elif code == "too_big":
            reason = f"the folder is over the limit of {max_files} files and {max_bytes} bytes"
        elif code == "cut":
            reason = "not read: the sandbox's answer was cut short"
            detail = outcome.stderr.decode("utf-8", "replace")[:1000]
        else:
            reason = self._describe(code) + (" (a file in the folder)" if inner else "")
        return FolderDownloadResponse(path=path, error=reason, detail=detail)
