"""An agent's session limits and the verifier's `Limits` speak one language: a field both have
is the same field (name, type, meaning), and all of them reach the container."""

from __future__ import annotations

from verifier.agents.sandbox.limits import SHARED_FIELDS, AgentSandboxLimits
from verifier.limits import Limits

#: What only a session has: its commands' time limits and the workspace tmpfs.
SESSION_ONLY = {"command_timeout_s", "max_command_timeout_s", "workspace_bytes"}


def test_every_container_field_has_the_name_limits_gives_it() -> None:
    assert set(AgentSandboxLimits.model_fields) - SHARED_FIELDS == SESSION_ONLY
    for name in SHARED_FIELDS:
        ours, theirs = AgentSandboxLimits.model_fields[name], Limits.model_fields[name]
        assert ours.annotation == theirs.annotation, name


def test_every_shared_field_reaches_the_container() -> None:
    changed = AgentSandboxLimits(
        memory_bytes=300 * 1024**2,
        cpus=0.5,
        pids=77,
        scratch_bytes=3 * 1024**2,
        output_bytes=5000,
        open_files=99,
        file_size_bytes=12345,
        runtime="gvisor",
    )
    container = changed.container_limits()
    for name in SHARED_FIELDS:
        assert getattr(container, name) == getattr(changed, name), name
    assert {name for name in SHARED_FIELDS if getattr(changed, name) == getattr(AgentSandboxLimits(), name)} == set()
