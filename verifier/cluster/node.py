"""The per-node half of the Ray backend: one `NodeSandbox` actor per node owns a warm pool on that
node's own Docker engine. Plain Python (no Ray import): `RayBackend` makes it an actor.

Before it serves a job the actor proves that its node verifies with the driver's image: the node's
verifier must have the driver's recipe digest, and the image (found on the node's engine, or built
there) must carry that digest as its label. Anything else refuses the node with the reason.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time

from pydantic import BaseModel, ConfigDict

from verifier._distribution import __version__
from verifier.cluster import lifeline
from verifier.errors import InvalidInput, SandboxUnavailable
from verifier.limits import Limits, PoolConfig
from verifier.sandbox import image as images
from verifier.sandbox.backend import LanguageImage, RawRun, SandboxJob
from verifier.sandbox.container import EngineError, connect, translated
from verifier.sandbox.environment import Environment
from verifier.sandbox.image import LABEL_RECIPE, Base
from verifier.sandbox.pool import WarmPool
from verifier.sandbox.requirements import DependencySpec


class NodeRefused(SandboxUnavailable):
    """This node cannot verify with the driver's image (recipe, engine or image differ)."""


class NodeSpec(BaseModel):
    """What the driver asks of every node (the same for all of them)."""

    model_config = ConfigDict(frozen=True)

    recipe_digest: str
    verifier_version: str
    image: str
    limits: Limits
    #: The pools' settings; each node sets its own size.
    pool: PoolConfig
    build: bool
    base: Base


class NodeInfo(BaseModel):
    """A node that passed its checks and serves jobs."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    #: How evidence names this node (`Evidence.node`): host name and the start of the Ray node id.
    name: str
    hostname: str
    pid: int
    pool_id: str
    size: int
    image: str
    image_id: str
    built: bool


def node_name(hostname: str, node_id: str) -> str:
    return f"{hostname}@ray:{node_id[:12]}"


class NodeSandbox:
    """A warm pool on this node's engine, behind `run(job)`. Created by `RayBackend` as a Ray actor."""

    def __init__(self, node_id: str, spec: NodeSpec, size: int) -> None:
        self.node_id = node_id
        self.spec = spec
        self.size = size
        self._pool: WarmPool | None = None
        self._lock = threading.Lock()
        self._jobs = 0
        self.name = node_name(socket.gethostname(), node_id)

    def start(self) -> NodeInfo:
        """Check this node against the driver's spec and start its pool.

        Raises:
            NodeRefused: the node's recipe digest, verifier version, engine or image do not fit.
        """
        spec, name = self.spec, self.name
        if spec.verifier_version != __version__:
            raise NodeRefused(
                f"node {name} runs verifier {__version__}, the driver {spec.verifier_version}: "
                "install the driver's verifier on every node"
            )
        base = spec.base
        try:
            mine = images.recipe_digest(base)
        except SandboxUnavailable as exc:
            raise NodeRefused(f"node {name}: {exc}") from None
        if mine != spec.recipe_digest:
            raise NodeRefused(
                f"node {name} has image recipe {mine[:16]}, the driver {spec.recipe_digest[:16]}: "
                "install the driver's verifier (same sandbox_images/ and runner) on every node"
            )
        try:
            client = connect()
        except SandboxUnavailable as exc:
            raise NodeRefused(f"node {name}: {exc}") from None
        built = False
        if spec.build and spec.image == images.image_tag(base):
            try:
                _, built = images.build(client, base=base)
            except SandboxUnavailable as exc:
                raise NodeRefused(f"node {name} could not build the sandbox image: {exc}") from None
        try:
            with translated():
                found = client.images.get(spec.image)
        except EngineError as exc:  # named by the engine's own error (ImageNotFound, ...)
            raise NodeRefused(f"node {name} has no image {spec.image} ({type(exc.__cause__).__name__})") from None
        label = found.labels.get(LABEL_RECIPE)
        if label != spec.recipe_digest:
            raise NodeRefused(
                f"node {name}: image {spec.image} has recipe {str(label)[:16]}, the driver {spec.recipe_digest[:16]}"
            )
        # First the lifeline, then the containers: no moment in which a killed actor leaves any.
        lifeline.spawn(os.getpid())
        pool = WarmPool(spec.pool.model_copy(update={"size": self.size}), image=spec.image, limits=spec.limits)
        self._pool = pool
        return NodeInfo(
            node_id=self.node_id,
            name=name,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            pool_id=pool.pool_id,
            size=self.size,
            image=spec.image,
            image_id=str(found.id),
            built=built,
        )

    def _ready_pool(self) -> WarmPool:
        if self._pool is None:
            raise SandboxUnavailable("the node's pool is not started or already closed")
        return self._pool

    def warm_up(self, timeout: float) -> int:
        return self._ready_pool().warm_up(timeout)

    def run(self, job: SandboxJob) -> tuple[RawRun, float]:
        """Run `job` on this node's pool: (the run, named for this node; seconds spent in this actor)."""
        started = time.monotonic()
        pool = self._ready_pool()
        raw = pool.run(job)
        with self._lock:
            self._jobs += 1
        return dataclasses.replace(raw, node=self.name), time.monotonic() - started

    def image_id(self, image: str) -> str:
        return self._ready_pool().image_id(image)

    def environment(self, spec: DependencySpec, image: str) -> Environment | str:
        """The environment of `spec` on this node's engine (found, or built with the node's own
        pip and index), or why it cannot have it: the driver refuses the node then."""
        try:
            return self._ready_pool().environment(spec, image)
        except (SandboxUnavailable, InvalidInput) as exc:
            return f"node {self.name} cannot provide the environment: {exc}"

    def language_image(self, language: str, image: str) -> LanguageImage | str:
        """The image of programs in `language` on this node's engine (found, or built from the
        node's own recipe), or why it cannot have it: the driver refuses the node then."""
        try:
            return self._ready_pool().language_image(language, image)
        except SandboxUnavailable as exc:
            return f"node {self.name} cannot provide the {language} image: {exc}"

    def stats(self) -> dict[str, int]:
        """Jobs served and the pool's counters."""
        out = {"jobs": self._jobs}
        if self._pool is not None:
            out.update(dataclasses.asdict(self._pool.stats))
        return out

    def close(self) -> None:
        """Remove every container of this node's pool."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
