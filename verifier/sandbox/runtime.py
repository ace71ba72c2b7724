"""Container runtimes: which engine runtime runs a sandbox, and whether the engine has it.

`Limits.runtime` names the isolation the evidence records: ``runc`` (the engine's own; the
candidate shares the host's kernel) or ``gvisor`` (gVisor's ``runsc``: a user-space kernel
between the candidate and the host's). Every container asks the engine for its runtime by
name, so a missing one fails the create; it never falls back to another runtime.
"""

from __future__ import annotations

from typing import Any

from verifier.errors import SandboxUnavailable
from verifier.limits import Limits

#: Limits.runtime -> the name the runtime is registered under in the engine (daemon.json).
ENGINE_NAMES = {"runc": "runc", "gvisor": "runsc"}
#: What registers gVisor's runsc with the engine (idempotent; needs root on Debian/Ubuntu).
INSTALL_COMMAND = "sudo scripts/ensure-docker.sh"


class RuntimeNotRegistered(SandboxUnavailable):
    """The engine has no runtime of the name the limits ask for; retrying cannot help."""


#: Limits.runtime -> the kernel a runner observes under it (`protocol.KERNELS`).
KERNEL_OF = {"runc": "linux", "gvisor": "gvisor"}


def kernel_mismatch(runtime: str, kernel: str) -> str | None:
    """Why a result observed on `kernel` is not evidence under `runtime`, or None when it is.

    The evidence names the runtime the limits asked for; this is what makes that name true: the
    runner reports the kernel it saw (`protocol.observed_kernel`), and a runtime registered under
    gVisor's name that is really runc (or the reverse) gives no verdict.
    """
    expected = KERNEL_OF[runtime]
    if kernel == expected:
        return None
    return (
        f"the sandbox observed a {kernel} kernel, but runtime {runtime} ({engine_name(runtime)}) runs {expected}: "
        f"the engine's {engine_name(runtime)!r} is not what its name says; no verdict without the runtime asked for"
    )


def engine_name(runtime: str) -> str:
    """The engine's name of `runtime` (a `Limits.runtime` value)."""
    return ENGINE_NAMES[runtime]


def registered(api: Any) -> set[str]:
    """The runtime names the engine knows (`docker info`'s Runtimes)."""
    return set((api.info().get("Runtimes") or {}).keys())


def missing_message(runtime: str) -> str:
    name = engine_name(runtime)
    return (
        f"the container runtime {runtime!r} ({name}) is not registered with the Docker engine: "
        f"run `{INSTALL_COMMAND}` from a verifier checkout (it installs {name} and registers it), "
        "or use runtime runc"
    )


def require(api: Any, limits: Limits) -> None:
    """Raise `RuntimeNotRegistered` when the engine lacks the runtime `limits` asks for.

    Asks the engine only for runtimes other than runc, which every engine has.
    """
    if limits.runtime == "runc":
        return
    if engine_name(limits.runtime) not in registered(api):
        raise RuntimeNotRegistered(missing_message(limits.runtime))
