"""The backend interface: run one job in a sandbox, return what happened.

A backend runs a command in a fresh, locked-down sandbox with some bytes on stdin and
returns the raw facts (exit code, output, whether it was killed for time, memory or
output). It decides nothing about tests; `verifier.verdict` does that. Backends:
`DockerBackend` (a container per job), `WarmPool` (pre-started containers, fresh or reused),
`verifier.cluster.RayBackend` (a pool on every node of a Ray cluster), `FakeBackend` for unit
tests of our own logic. tests/sandbox/test_contract.py is the contract every one must keep.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from verifier.closing import Closing
from verifier.limits import Limits
from verifier.sandbox.requirements import DependencySpec

#: The repository of environment images (`verifier.sandbox.environment` builds them).
ENV_REPO = "verifier-env"


def env_tag(digest: str) -> str:
    """An environment image's tag: its digest's first 16 hex digits in `ENV_REPO`."""
    return f"{ENV_REPO}:{digest[:16]}"


@dataclass(frozen=True)
class SandboxJob:
    """One command to run in a fresh sandbox."""

    image: str
    command: Sequence[str]
    limits: Limits
    stdin: bytes = b""
    #: "plain": runs as the trusted uid with no capabilities at all.
    #: "launcher": starts as root holding only SETUID/SETGID, for the in-container launcher
    #: that splits into the trusted and the candidate user before any other code runs.
    mode: Literal["plain", "launcher"] = "plain"
    labels: Mapping[str, str] = field(default_factory=dict)
    #: Called (on the backend's reader thread) with each progress line the sandbox writes while
    #: the job runs (`protocol.PROGRESS_PREFIX`); the caller, which knows the job's nonce, reads
    #: it. Never part of what runs: a backend that cannot call back here (Ray) drops it.
    progress: Callable[[bytes], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class RawRun:
    """What the sandbox observed. Output is capped; `truncated` says when bytes were dropped."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    truncated: bool
    timed_out: bool
    oom_killed: bool
    output_limited: bool
    duration_s: float
    overhead_s: float
    image_id: str
    container_id: str
    queue_s: float = 0.0
    #: The machine (or cluster node) whose engine ran the job; None: this one.
    node: str | None = None
    #: Sandbox runs it took (more than 1 when a container died under the job and it was rerun).
    attempts: int = 1
    #: When the host killed the job for time: whether the machine was too busy to give the
    #: sandbox its CPU at that moment (None: not killed for time, or unknown).
    host_starved: bool | None = None


@dataclass(frozen=True)
class Environment:
    """The image one run uses: the sandbox image, or an environment image layered on it
    (built by `verifier.sandbox.environment`; a plain record here so that every backend can
    name it without importing the machinery that builds it)."""

    digest: str
    image_id: str
    image_ref: str
    built: bool
    packages: tuple[str, ...]
    spec: DependencySpec
    build_s: float = 0.0
    #: Top-level modules the installed packages define (a candidate may not take these names).
    modules: tuple[str, ...] = ()

    @property
    def tag(self) -> str:
        """The environment image's tag (the sandbox image's id when nothing is declared)."""
        return env_tag(self.digest) if self.spec.requirements else self.image_ref


@dataclass(frozen=True)
class LanguageImage:
    """The image a program in another language runs on (`verifier.sandbox.image.language_image`):
    the sandbox image's recipe on a base with that language's Debian packages."""

    language: str
    tag: str
    image_id: str
    #: The language's packages in the image, as name=version (from its labels).
    toolchain: tuple[str, ...] = ()


class SandboxBackend(Closing, ABC):
    """Runs jobs in sandboxes. Use as a context manager so `close` always runs."""

    isolation: Literal["fresh", "reuse"] = "fresh"

    @abstractmethod
    def run(self, job: SandboxJob) -> RawRun:
        """Run `job` to completion in a fresh sandbox.

        Raises:
            SandboxUnavailable: the sandbox itself failed (engine down, image missing);
                a job that merely fails, hangs or crashes is a `RawRun`, not an exception.
        """

    def image_id(self, image: str) -> str:
        """The engine's id of `image` (what evidence records). Raises SandboxUnavailable."""
        raise NotImplementedError

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        """The environment image of `spec` on the sandbox image `image`, found on (or built for)
        the engine(s) this backend runs on (`verifier.sandbox.environment`).

        Raises:
            DependencyError: a requirement cannot be resolved from the index (an InvalidInput).
            SandboxUnavailable: the engine, the build, or (Ray) a node cannot provide it.
        """
        raise NotImplementedError

    def language_image(self, language: str, image: str) -> LanguageImage:
        """The image of programs in `language` (not Python), found on (or built for) the
        engine this backend runs on; `image`: the sandbox image it goes with.

        Raises:
            SandboxUnavailable: the engine or the build failed.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release everything the backend holds (containers, threads)."""
