"""What an agent's sandbox is made with, and the proof, when one is found again, that it is one
this verifier made with exactly that.

`create_kwargs` is the agent sandbox's create arguments (`hardening.container_kwargs` plus its
own users, workspace and CPU weight): made from it at creation, and compared against at attach.
`record_made` writes the host's record of a new sandbox (`verifier.sandbox.provenance`) before
it starts; `prove` accepts a container found by id only when that record exists for its id,
matches the engine's record of it (name, image, the digest of its whole configuration), and its
actual configuration is what `create_kwargs` gives for the record's facts. Labels are written
for people and for `verifier gc`'s sweep, never read as proof.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.agents.sandbox.lease import LEASE_DIR, LEASE_TMPFS, check_idle_timeout, watchdog_command
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.errors import UnknownSandbox
from verifier.sandbox import provenance
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.container import engine_host_config, remove, remove_volume
from verifier.sandbox.gc import owner_labels
from verifier.sandbox.hardening import LABEL_IDLE_TIMEOUT, LABEL_MANAGED, container_kwargs

WORKSPACE = "/workspace"
#: The agent's user: its commands and its uploads (the sandbox image's own USER).
AGENT_UID = 2000
#: init, keep-alive and downloads: a user the agent's processes cannot signal or trace.
KEEPER_UID = 65534
KEEPER = f"{KEEPER_UID}:{KEEPER_UID}"
LABEL_AGENT_SANDBOX = "org.verifier.agent-sandbox"
#: On a lasting sandbox, for people reading `docker inspect` (never read back as proof: the
#: host's record holds the same facts).
LABEL_AGENT_LIMITS = "org.verifier.agent-limits"
LABEL_AGENT_SHELL = "org.verifier.agent-shell"
LABEL_AGENT_VOLUME = "org.verifier.agent-volume"
#: PID 2 of a fleeting sandbox: ends when its maker closes the container's stdin (or dies).
KEEPALIVE = ("/bin/sh", "-c", "exec cat > /dev/null")
#: The container's CPU weight (Docker's cpu-shares; every verification container has the default
#: 1024). An agent's session holds no admission slot: its commands can sleep for an hour or leave
#: daemons behind, so a slot per command would let two idle `sleep`s shut every verification on
#: the machine out. Instead its CPU is bounded twice: its quota (`AgentSandboxLimits.cpus`)
#: caps what it can use on an idle machine, and this weight gives it a quarter of a
#: verification's share when they compete, so verifications stay fair.
AGENT_CPU_SHARES = 256
#: The record's facts (`provenance.Made.facts`) of an agent sandbox.
FACT_LIMITS, FACT_SHELL, FACT_IDLE, FACT_VOLUME = "limits", "shell", "idle_timeout_s", "volume"


def command(idle_timeout_s: float | None) -> tuple[str, ...]:
    """The container's command: the watchdog of a lasting sandbox, the keep-alive of a fleeting one."""
    return KEEPALIVE if idle_timeout_s is None else watchdog_command(idle_timeout_s)


def _workspace_mount(volume: str, options: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """A lasting sandbox's workspace: named volume `volume` on a tmpfs with mount `options`
    (its size among them), made by the engine with the container (so no other process sees
    it without a container), with our labels so `verifier gc` finds it once unused."""
    driver = {"Name": "local", "Options": {"type": "tmpfs", "device": "tmpfs", "o": options}}
    return {
        "Target": WORKSPACE,
        "Source": volume,
        "Type": "volume",
        "ReadOnly": False,
        "VolumeOptions": {"NoCopy": True, "Labels": dict(labels), "DriverConfig": driver},
    }


def labels(
    name: str, limits: AgentSandboxLimits, shell: str, idle_s: float | None, volume: str | None
) -> dict[str, str]:
    """The sandbox's own labels (besides the owner's)."""
    found = {LABEL_AGENT_SANDBOX: name}
    if volume is not None and idle_s is not None:
        found[LABEL_IDLE_TIMEOUT] = f"{idle_s:g}"
        found[LABEL_AGENT_LIMITS] = limits.model_dump_json()
        found[LABEL_AGENT_SHELL] = shell
        found[LABEL_AGENT_VOLUME] = volume
    return found


def create_kwargs(
    *, name: str, image: str, limits: AgentSandboxLimits, shell: str, idle_s: float | None, volume: str | None
) -> dict[str, Any]:
    """The create arguments (host_config included) of the agent sandbox `name` on image `image`."""
    job = SandboxJob(image=image, command=command(idle_s), limits=limits.container_limits(), mode="plain")
    kwargs = container_kwargs(job, owner_labels(labels(name, limits, shell, idle_s, volume)))
    kwargs.update(user=KEEPER, working_dir=WORKSPACE)
    host = kwargs["host_config"]
    host["cpu_shares"] = AGENT_CPU_SHARES  # instead of admission slots: see AGENT_CPU_SHARES
    size, owner = limits.workspace_bytes, f"uid={AGENT_UID},gid={AGENT_UID}"
    if volume is None:
        host["tmpfs"] = {**host["tmpfs"], WORKSPACE: f"rw,nosuid,nodev,size={size},{owner},mode=0755"}
    else:  # lasting: nobody holds its stdin; the watchdog's lease lives on the keeper's tmpfs
        kwargs["stdin_open"] = False
        host["tmpfs"] = {**host["tmpfs"], LEASE_DIR: LEASE_TMPFS}
        volume_labels = {LABEL_MANAGED: "1", LABEL_AGENT_SANDBOX: name}
        host["mounts"] = [_workspace_mount(volume, f"size={size},{owner},mode=0755,nosuid,nodev", volume_labels)]
    return kwargs


def facts(limits: AgentSandboxLimits, shell: str, idle_s: float | None, volume: str | None) -> dict[str, str]:
    """What the record keeps to serve the sandbox again."""
    found = {FACT_LIMITS: limits.model_dump_json(), FACT_SHELL: shell}
    if idle_s is not None and volume is not None:
        found |= {FACT_IDLE: f"{idle_s!r}", FACT_VOLUME: volume}
    return found


def record_made(api: Any, record: Mapping[str, Any] | None, *, name: str, image: str, kept: Mapping[str, str]) -> None:
    """Write the host's record of the sandbox just created (the engine's `record` of it, read
    before it starts). Raises ProvenanceError (nothing is written)."""
    if record is None:
        raise provenance.ProvenanceError(f"the sandbox {name} vanished while it was made")
    made = provenance.Made(
        id=str(record["Id"]), name=name, image=image, config_sha256=provenance.config_sha256(record), facts=dict(kept)
    )
    provenance.remember(made)


def _foreign(name: str, why: str) -> UnknownSandbox:
    return UnknownSandbox(f"{name!r} is not an agent sandbox this verifier made: {why}", why="foreign")


def prove(api: Any, record: Mapping[str, Any] | None, sandbox_id: str) -> provenance.Made:
    """The host's record of the container `record` (the engine's, looked up by `sandbox_id`)
    once it is proven to be a lasting agent sandbox this verifier made, configured as it was
    made; else UnknownSandbox saying why ("missing", "foreign", "fleeting"). Its state is not
    looked at (`live`)."""
    name = str((record or {}).get("Name", "")).lstrip("/")
    if record is None or name != sandbox_id:
        raise UnknownSandbox(f"no sandbox has the id {sandbox_id!r}", why="missing")
    made = provenance.recall(str(record.get("Id", "")))
    if made is None and (record.get("State") or {}).get("Status") == "created":
        # Its maker writes the record between creating and starting it: not proven yet, not served.
        raise UnknownSandbox(f"the sandbox {name} is being made; try again in a moment", why="starting")
    why = provenance.proven(record, made)
    if why is not None or made is None:
        raise _foreign(name, why or "no record")
    if FACT_IDLE not in made.facts:
        raise UnknownSandbox(
            f"the sandbox {name} ends with the process that made it (made without idle_timeout_s); "
            "only that process can use it",
            why="fleeting",
        )
    try:
        limits = AgentSandboxLimits.model_validate_json(made.facts[FACT_LIMITS])
        idle_s = check_idle_timeout(float(made.facts[FACT_IDLE]))
        shell, volume = made.facts[FACT_SHELL], made.facts[FACT_VOLUME]
    except (KeyError, ValueError) as exc:
        raise _foreign(name, "its record cannot be read by this version") from exc
    kwargs = create_kwargs(name=name, image=made.image, limits=limits, shell=shell, idle_s=idle_s, volume=volume)
    host = engine_host_config(api, kwargs.pop("host_config"))
    wrong = list(provenance.mismatches(record, {**kwargs, "command": command(idle_s)}, host, made.image))
    if wrong:
        more = f" and {len(wrong) - 24} more" if len(wrong) > 24 else ""
        raise _foreign(name, f"its configuration is not the one it is made with ({', '.join(wrong[:24])}{more})")
    return made


def live(record: Mapping[str, Any], made: provenance.Made) -> None:
    """UnknownSandbox ("starting", "ended") unless the proven sandbox `record` is running."""
    state = record.get("State") or {}
    if state.get("Status") == "created":
        raise UnknownSandbox(f"the sandbox {made.name} is being made; try again in a moment", why="starting")
    if not state.get("Running"):
        raise UnknownSandbox(
            f"the sandbox {made.name} has ended (idle past its timeout of {float(made.facts[FACT_IDLE]):g} s, "
            "or stopped); `verifier gc` removes it",
            why="ended",
        )


def discard(api: Any, made: provenance.Made) -> None:
    """Remove the proven sandbox `made` and its workspace volume, and their records. By its id,
    not its name: a thread's sandbox made anew under the same name since is left alone."""
    remove(api, made.id)
    provenance.forget(made.id)
    forget_volume(api, made.facts.get(FACT_VOLUME))


def forget_volume(api: Any, volume: str | None) -> None:
    """Remove workspace volume `volume` of ours and its record (once the engine let it go)."""
    if volume and remove_volume(api, volume):
        provenance.forget_volume(volume)
