"""What an agent's sandbox session may use (`DockerSandbox(limits=...)`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from verifier.limits import Limits, MiB, Runtime

#: A command that writes this many times the kept output is stopped as a flood.
FLOOD_FACTOR = 16


class AgentSandboxLimits(BaseModel):
    """What an agent's sandbox session may use. A field that `Limits` also has has its name and
    meaning (with defaults for a working session, not for one verification); the session adds
    its commands' time limits and the workspace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command_timeout_s: float = Field(120.0, gt=0, le=3600, description="Per-command limit when none is given.")
    max_command_timeout_s: float = Field(
        3600.0, gt=0, le=24 * 3600, description="Largest per-command limit a caller may ask for (0 asks for it)."
    )
    output_bytes: int = Field(
        1 * MiB,
        ge=1024,
        description=f"Output kept per command (truncated=True past it); {FLOOD_FACTOR}x this stops the command.",
    )
    memory_bytes: int = Field(1024 * MiB, ge=64 * MiB, description="Memory of the container; swap is off.")
    cpus: float = Field(1.0, gt=0, le=64, description="CPU quota of the container.")
    pids: int = Field(256, ge=32, description="Most processes and threads in the container.")
    workspace_bytes: int = Field(256 * MiB, ge=1 * MiB, description="Size of the /workspace tmpfs.")
    scratch_bytes: int = Field(64 * MiB, ge=1 * MiB, description="Size of the /tmp tmpfs.")
    file_size_bytes: int = Field(
        16 * MiB, ge=1024, description="Largest file uploaded, downloaded or written (RLIMIT_FSIZE)."
    )
    open_files: int = Field(1024, ge=64, description="RLIMIT_NOFILE of every process.")
    runtime: Runtime = Field("runc", description="Container runtime (see Limits.runtime).")

    def container_limits(self) -> Limits:
        """The verifier's `Limits` for the container (`container_kwargs`): every field both models
        have, under the same name and meaning (tests/agents/test_sandbox_limits.py holds them to
        it); the rest of `Limits` (run and call budgets) means nothing to a session."""
        return Limits(**self.model_dump(include=set(SHARED_FIELDS)))


#: The fields an agent's session limits share with `Limits`: same name, same meaning.
SHARED_FIELDS = frozenset(AgentSandboxLimits.model_fields) & frozenset(Limits.model_fields)
