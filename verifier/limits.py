"""Resource limits of one sandboxed run: one frozen value, recorded in every evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from verifier.runner.protocol import PYTEST_PRELOAD

MiB = 1024**2

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_CALL_TIMEOUT_S = 10.0
DEFAULT_MEMORY_BYTES = 512 * MiB
DEFAULT_CPUS = 1.0
DEFAULT_PIDS = 128
DEFAULT_SCRATCH_BYTES = 64 * MiB
DEFAULT_OUTPUT_BYTES = 1 * MiB
DEFAULT_OPEN_FILES = 256
DEFAULT_FILE_SIZE_BYTES = 16 * MiB

Runtime = Literal["runc", "gvisor"]
#: Container runtimes from the weakest isolation to the strongest.
RUNTIME_STRENGTH: tuple[Runtime, ...] = ("runc", "gvisor")


def stronger_runtime(a: Runtime, b: Runtime) -> Runtime:
    """The runtime that isolates more of `a` and `b` (gvisor over runc)."""
    return max(a, b, key=RUNTIME_STRENGTH.index)


class Limits(BaseModel):
    """What a sandboxed run may use. Every field is recorded in the evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(
        DEFAULT_TIMEOUT_S,
        gt=0,
        le=3600,
        description="Wall-clock limit of the whole run, enforced from the host with a kill.",
    )
    call_timeout_s: float = Field(
        DEFAULT_CALL_TIMEOUT_S,
        gt=0,
        le=3600,
        description="Wall-clock limit of one call into the candidate.",
    )
    memory_bytes: int = Field(
        DEFAULT_MEMORY_BYTES, ge=32 * MiB, description="Memory limit of the container; swap is off."
    )
    cpus: float = Field(DEFAULT_CPUS, gt=0, le=64, description="CPU quota of the container.")
    pids: int = Field(DEFAULT_PIDS, ge=16, description="Most processes and threads in the container.")
    scratch_bytes: int = Field(
        DEFAULT_SCRATCH_BYTES, ge=1 * MiB, description="Size of each writable tmpfs scratch dir."
    )
    output_bytes: int = Field(
        DEFAULT_OUTPUT_BYTES,
        ge=1024,
        description="Most bytes of output kept; more is an output_limit outcome.",
    )
    open_files: int = Field(DEFAULT_OPEN_FILES, ge=32, description="RLIMIT_NOFILE inside the container.")
    file_size_bytes: int = Field(DEFAULT_FILE_SIZE_BYTES, ge=1024, description="RLIMIT_FSIZE inside the container.")
    network: str = Field("none", pattern="^none$", description="Network of the container: only 'none' is supported.")
    runtime: Runtime = Field(
        "runc",
        description="Container runtime: runc (the engine's default) or gvisor (runsc, a user-space kernel "
        "between the candidate and the host). Part of the evidence id: a verdict under one is not one under the other.",
    )

    def overridden(self, overrides: Mapping[str, Any]) -> Limits:
        """These limits with `overrides` (a suite's `[limits]`) applied, validated as a whole.

        Budgets (time, memory, CPU, ...) are replaced: a suite knows what its tests need. The
        runtime is an isolation floor, not a budget: the stronger of the two wins, so a suite may
        ask for gvisor but can never lower a caller's gvisor to runc. The one rule for every path
        that combines a caller's limits with a suite's (`Suite.limits`).
        """
        merged = {**self.model_dump(), **overrides}
        limits = Limits.model_validate(merged)
        return limits.model_copy(update={"runtime": stronger_runtime(self.runtime, limits.runtime)})


#: How a verifier runs its jobs: one new container per job ("cold"), or a warm pool of
#: containers ("fresh": each container serves one job; "reuse": up to `max_uses`, with a
#: reset between jobs). The one place this choice is written (`Verifier.with_policy`).
RunPolicy = Literal["reuse", "fresh", "cold"]
#: The policies of a warm pool.
PoolPolicy = Literal["fresh", "reuse"]


#: A repository's whole suite needs more room than one candidate's: `verifier review`'s defaults.
REVIEW_LIMITS = Limits(
    timeout_s=900,
    memory_bytes=2048 * MiB,
    pids=512,
    scratch_bytes=1024 * MiB,
    output_bytes=32 * MiB,
    open_files=1024,
    file_size_bytes=256 * MiB,
)


class PoolConfig(BaseModel):
    """How a warm pool runs its containers: one frozen value, passed whole through
    `Verifier.pooled`, `WarmPool` and the Ray backend's node pools (see verifier.sandbox.pool)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: PoolPolicy = Field(
        "fresh", description="fresh: a container serves one job; reuse: up to max_uses jobs, reset between them."
    )
    size: int = Field(2, ge=1, description="Containers kept warm (on a Ray cluster: per node, see RayBackend).")
    max_uses: int = Field(200, ge=1, description="Jobs one container serves under reuse before it is replaced.")
    preload: str = Field(
        PYTEST_PRELOAD,
        description="Modules (comma-separated) the trusted side imports before the first job; "
        "'' for suites that need none (programs, the direct runner).",
    )

    @property
    def jobs_per_container(self) -> int:
        """How many jobs one container serves: one under fresh, max_uses under reuse."""
        return 1 if self.policy == "fresh" else self.max_uses
