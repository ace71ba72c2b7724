"""Making an agent's sandbox container: the image it starts on (`environment_image`), the form of
its id (`SANDBOX_ID`), and its launch (`launch_sandbox`), which writes the host's record of it
before it starts and leaves nothing behind when it fails.

What ends an object's hold on it lives here too: a fleeting sandbox is removed (`release`) when
its object goes (the keep-alive reads the stdin this process holds), a lasting one is let go
(`let_go`). `DockerSandbox` (`box`) uses all of it; `identity` says what it is made with.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

from verifier.agents.sandbox.identity import command, create_kwargs, facts, forget_volume, record_made
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.errors import InvalidInput
from verifier.sandbox import environment, provenance
from verifier.sandbox.container import container_record, image_id, launch, remove
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.image import image_tag
from verifier.sandbox.requirements import parse_lines
from verifier.suite import load_suite

#: A sandbox id (the container's name) as the engine allows one.
SANDBOX_ID = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}")

Owner = TypeVar("Owner")


def release(api: Any, name: str, cid: str, stdin: Any) -> None:
    """A fleeting sandbox whose object is done: its stdin closed, its container removed."""
    try:
        stdin.close()
    except OSError:
        pass
    if remove(api, name):
        provenance.forget(cid)


def let_go() -> None:
    """A lasting sandbox at interpreter exit: left running (its idle timeout ends it)."""


def environment_image(
    client: Any, image: str | None, requirements: Sequence[str] | None, suite: str | PathLike[str] | None
) -> str | None:
    """The image an agent's sandbox starts on: `image` (None: the sandbox image), or the
    environment image of `requirements` / `suite` built on it (`verifier.sandbox.environment`)."""
    if requirements is None and suite is None:
        return image
    if requirements is not None and suite is not None:
        raise InvalidInput("DockerSandbox: pass requirements or suite, not both")
    if suite is not None:
        spec = load_suite(Path(suite)).requirements
    else:
        spec = parse_lines(list(requirements or []), "requirements")
    if not spec.requirements:
        return image
    return environment.ensure(DockerBackend(client), spec, image or image_tag()).tag


def launch_sandbox(
    owner: Owner,
    api: Any,
    *,
    name: str,
    image: str | None,
    limits: AgentSandboxLimits,
    shell: str,
    idle_s: float | None,
    volume: str | None,
) -> tuple[str, weakref.finalize[..., Owner]]:
    """Create and start the sandbox's container for `owner`: its id, and the finalizer that ends
    `owner`'s hold on it (removes a fleeting one, lets a lasting one go).

    The host's record of it is written before it starts: a sandbox of ours never runs without
    it. On failure nothing is left: the container is removed (a taken name: not ours, left
    alone), its record and its volume's forgotten, and the error raised."""
    made_from = image_id(api, image or image_tag())
    kwargs = create_kwargs(name=name, image=made_from, limits=limits, shell=shell, idle_s=idle_s, volume=volume)
    kept = facts(limits, shell, idle_s, volume)

    made: list[str] = []
    finalizers: list[weakref.finalize[..., Owner]] = []

    def attached(cid: str, stdin: Any) -> None:
        made.append(cid)
        if stdin is None:
            finalizers.append(weakref.finalize(owner, let_go))
        else:
            finalizers.append(weakref.finalize(owner, release, api, name, cid, stdin))
        # Before it starts: a sandbox of ours never runs without the host's record of it.
        record_made(api, container_record(api, cid), name=name, image=made_from, kept=kept)

    try:
        if volume is not None:
            provenance.remember_volume(volume)
        cid = launch(
            api,
            name=name,
            image_id=made_from,
            command=command(idle_s),
            kwargs=kwargs,
            attach=None if idle_s is not None else {"stdin": 1, "stream": 1},
            attached=attached,
            what="the agent's sandbox",
        )
    except BaseException:  # launch removed the container (a taken name: not ours, left alone)
        for finalizer in finalizers:
            finalizer.detach()
        for made_id in made:
            provenance.forget(made_id)
        if volume is not None:
            forget_volume(api, volume)
        raise
    return cid, finalizers[-1]
