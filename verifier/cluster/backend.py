"""RayBackend: the sandbox backend spread over the nodes of a Ray cluster.

One long-lived `NodeSandbox` actor per node (pinned there with node affinity) owns a warm pool on
that node's own Docker engine; the driver sends each job to the node with the most room, at most
`size + backlog` jobs per node at once, and gets back the same `RawRun` a local pool returns,
naming the node. `Verifier` builds the evidence on the driver, so evidence ids are the local
pool's (when the nodes hold the same image).

A node that dies mid-batch takes its in-flight jobs with it: each of them is rerun once on another
node (never twice: Ray's own task retries are off), so every job gets exactly one result, and the
number rerun is counted (`stats().reruns`). `close()` (also on Ctrl-C through the context manager,
and at exit) closes every node's pool and kills the actors; an actor killed without closing its
pool (its node's raylet died, the driver was killed) is cleaned up by its lifeline
(`verifier.cluster.lifeline`).

Ray is imported lazily: `import verifier` works without the `ray` extra.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypedDict, TypeVar, Unpack

from pydantic import BaseModel

from verifier._distribution import __version__, install_hint
from verifier.cluster.node import NodeInfo, NodeRefused, NodeSandbox, NodeSpec
from verifier.errors import SandboxUnavailable
from verifier.limits import Limits, PoolConfig
from verifier.sandbox.backend import LanguageImage, RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.environment import Environment
from verifier.sandbox.image import Base, image_tag, recipe_digest
from verifier.sandbox.pool import ACQUIRE_TIMEOUT_S
from verifier.sandbox.requirements import DependencySpec
from verifier.verify import Verifier

log = logging.getLogger(__name__)

#: A cluster's pools reuse their containers unless told otherwise (batches are what it is for).
CLUSTER_POOL = PoolConfig(policy="reuse")
#: Ray namespace of the node actors (their names start with "verifier-<backend id>-").
NAMESPACE = "verifier"
#: How long a node may take to check itself, build its image if need be, and start its pool.
START_TIMEOUT_S = 900.0
#: How long close() waits for the nodes to remove their containers before it kills the actors.
CLOSE_TIMEOUT_S = 60.0
#: Margin past a job's own limit and a pool's wait for a container before the driver gives up.
ANSWER_GRACE_S = 60.0
RAY_EXTRA = f"the Ray backend needs Ray: {install_hint('ray')}"
#: What nodes must agree on (an environment, a language image).
T = TypeVar("T")


def _agreed(
    answers: dict[str, T | str], what: str, key: Callable[[T], object], differs: Callable[[str, T, str, T], str]
) -> T:
    """The one `what` every node has (each node's answer: it, or why the node has none). A node
    without it, or with another build (`key` differs), refuses the job with `differs`' message
    naming that node: a job must be judged the same wherever it runs."""
    if not answers:
        raise SandboxUnavailable(f"no live Ray node to provide {what}")
    for answer in answers.values():
        if isinstance(answer, str):
            raise NodeRefused(answer)
    held: dict[str, T] = {name: answer for name, answer in answers.items() if not isinstance(answer, str)}
    first_name, first = next(iter(held.items()))
    for name, answer in held.items():
        if key(answer) != key(first):
            raise NodeRefused(differs(name, answer, first_name, first))
    return first


def agreed_environment(answers: dict[str, Environment | str]) -> Environment:
    """The one environment every node has: the same digest (sandbox image and pins) on each."""
    return _agreed(
        answers,
        "the suite's environment",
        lambda env: env.digest,
        lambda name, env, first_name, first: (
            f"node {name} has environment {env.digest[:16]}, node {first_name} {first.digest[:16]} for the same "
            "requirements: give every node the same sandbox image (verifier image build --suite DIR on each)"
        ),
    )


def agreed_language_image(answers: dict[str, LanguageImage | str]) -> LanguageImage:
    """The one language image every node holds: the same build (image id and toolchain, which the
    evidence and its id name) on each, so a program is judged by the same compiler wherever it runs."""
    return _agreed(
        answers,
        "the language image",
        lambda image: (image.image_id, image.toolchain),
        lambda name, image, first_name, first: (
            f"node {name} has {image.tag} as {image.image_id[:19]}, node {first_name} as {first.image_id[:19]}: "
            "load one language image on every node (docs/scale.md)"
        ),
    )


def import_ray() -> ModuleType:
    """The `ray` module, or SandboxUnavailable naming the extra that installs it."""
    try:
        import ray
        import ray.exceptions
        import ray.util.scheduling_strategies
    except ImportError as exc:
        raise SandboxUnavailable(RAY_EXTRA) from exc
    return ray


class LostNode(BaseModel):
    name: str
    reason: str


class ClusterStats(BaseModel):
    """What the backend did so far."""

    nodes: list[NodeInfo]
    #: Nodes that failed their checks at start: name (or Ray node id) -> reason.
    refused: dict[str, str]
    #: Nodes that died while the backend used them.
    lost: list[LostNode]
    #: Jobs answered by a node.
    jobs: int
    #: Jobs sent again to another node because the node that held them died.
    reruns: int
    #: Sum over answered jobs of (driver's round trip - time spent inside the node's actor).
    ray_overhead_s: float


@dataclass(eq=False)
class _Node:
    info: NodeInfo
    actor: Any
    cap: int
    busy: int = 0
    sent: int = 0
    alive: bool = True


@dataclass
class _Counters:
    jobs: int = 0
    reruns: int = 0
    overhead_s: float = 0.0
    lost: list[LostNode] = field(default_factory=list)


class RayBackend(SandboxBackend):
    """Jobs spread over the nodes of a Ray cluster, each node verifying on its own engine.

    Args:
        address: the cluster ("auto": `RAY_ADDRESS` or the cluster started on this machine);
            ignored when this process is already connected to Ray.
        image: the sandbox image tag; the one of this checkout's recipe by default.
        limits: the pools' container-level limits (jobs with others run cold on the node).
        pool: every node's pool settings (policy, max_uses, preload; see `PoolConfig`); reuse by
            default. Its `size` is replaced per node: `per_node`, or the node's Ray CPU count.
        per_node: containers per node; default: the node's Ray CPU count.
        backlog: jobs sent to a node beyond its container count, so that its containers do not
            wait for the driver's next job.
        resource: use only nodes that offer this custom Ray resource (e.g. the ones with an engine).
        build: build the image on a node that lacks it (from the node's own recipe).
        base: the image's base (see verifier.sandbox.image).
        recipe: the recipe digest every node must have; this checkout's by default.
    """

    def __init__(
        self,
        pool: PoolConfig = CLUSTER_POOL,
        *,
        address: str = "auto",
        image: str | None = None,
        limits: Limits | None = None,
        per_node: int | None = None,
        backlog: int = 1,
        resource: str | None = None,
        build: bool = True,
        base: Base = "auto",
        recipe: str | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        if per_node is not None and per_node < 1:
            raise ValueError("per_node must be at least 1")
        if backlog < 0:
            raise ValueError("backlog must not be negative")
        self._ray = import_ray()
        self.isolation = pool.policy
        self.image = image or image_tag(base)
        self.limits = limits or Limits()
        self.id = uuid.uuid4().hex[:12]
        self.refused: dict[str, str] = {}
        self._nodes: list[_Node] = []
        self._actors: list[Any] = []
        self._cond = threading.Condition()
        self._closed = False
        self._counters = _Counters()
        self._owns_connection = False
        spec = NodeSpec(
            recipe_digest=recipe or recipe_digest(base),
            verifier_version=__version__,
            image=self.image,
            limits=self.limits,
            pool=pool,
            build=build,
            base=base,
        )
        if not self._ray.is_initialized():
            try:
                self._ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise SandboxUnavailable(f"cannot connect to the Ray cluster at {address!r}: {exc}") from exc
            self._owns_connection = True
        # After ray.init: exit handlers run last-in first-out, so this closes the pools while
        # the connection that reaches them is still up.
        atexit.register(self.close)
        try:
            self._start(spec, per_node, backlog, resource, start_timeout_s)
        except BaseException:
            self.close()
            raise

    # -- start -------------------------------------------------------------------------
    def _start(self, spec: NodeSpec, per_node: int | None, backlog: int, resource: str | None, timeout: float) -> None:
        ray = self._ray
        nodes = [n for n in ray.nodes() if n.get("Alive") and (resource is None or n["Resources"].get(resource, 0) > 0)]
        if not nodes:
            offering = f" offering the resource {resource!r}" if resource else ""
            raise SandboxUnavailable(f"the Ray cluster has no live node{offering}")
        actor_class = ray.remote(NodeSandbox)
        pending: list[tuple[Any, Any, int, str]] = []
        for n in nodes:
            node_id = str(n["NodeID"])
            size = per_node or max(1, int(n["Resources"].get("CPU", 1)))
            cap = size + backlog
            actor = actor_class.options(
                name=f"verifier-{self.id}-{node_id[:12]}",
                namespace=NAMESPACE,
                num_cpus=0,  # the work runs in containers; the actor only waits for them
                max_restarts=0,  # a lost node stays lost: its jobs are rerun elsewhere, once
                max_task_retries=0,
                max_concurrency=cap + 4,  # room for warm_up/stats/close next to the jobs
                scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                    node_id=node_id, soft=False
                ),
            ).remote(node_id, spec, size)
            with self._cond:
                self._actors.append(actor)  # known before it starts: close() must reach it whatever happens
            pending.append((actor.start.remote(), actor, cap, node_id))
        deadline = time.monotonic() + timeout
        for ref, actor, cap, node_id in pending:
            try:
                info: NodeInfo = ray.get(ref, timeout=max(0.0, deadline - time.monotonic()))
            except ray.exceptions.RayTaskError as exc:
                self._refuse(actor, node_id, str(getattr(exc, "cause", None) or exc))
                continue
            except (ray.exceptions.RayError, TimeoutError) as exc:
                self._refuse(actor, node_id, f"the node's actor did not start: {exc.__class__.__name__}: {exc}")
                continue
            with self._cond:
                self._nodes.append(_Node(info=info, actor=actor, cap=cap))
        live = [n.info for n in self._nodes if n.alive]
        if not live:
            reasons = "\n".join(f"  {k}: {v}" for k, v in self.refused.items())
            raise SandboxUnavailable(f"no Ray node can verify:\n{reasons}")
        if len({i.image_id for i in live}) > 1:
            log.warning(
                "the nodes hold different builds of %s (image ids differ), so evidence ids differ by node; "
                "load one image on every node (docs/scale.md)",
                self.image,
            )

    def _refuse(self, actor: Any, node_id: str, reason: str) -> None:
        log.warning("Ray node %s refused: %s", node_id[:12], reason)
        self.refused[node_id] = reason
        self._kill(actor)

    def _kill(self, actor: Any) -> None:
        try:
            self._ray.kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already dead, or Ray is shutting down: nothing left to kill
            pass

    # -- jobs --------------------------------------------------------------------------
    @property
    def slots(self) -> int:
        """Jobs the live nodes take at once: the concurrency a batch needs to keep them busy."""
        with self._cond:
            return sum(n.cap for n in self._nodes if n.alive)

    @property
    def nodes(self) -> list[NodeInfo]:
        with self._cond:
            return [n.info for n in self._nodes if n.alive]

    def _take(self) -> _Node:
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxUnavailable("the Ray backend is closed")
                live = [n for n in self._nodes if n.alive]
                if not live:
                    lost = "; ".join(f"{x.name}: {x.reason}" for x in self._counters.lost) or "none started"
                    raise SandboxUnavailable(f"no live Ray node is left ({lost})")
                free = [n for n in live if n.busy < n.cap]
                if free:
                    node = min(free, key=lambda n: (n.busy / n.cap, n.sent))
                    node.busy += 1
                    node.sent += 1
                    return node
                self._cond.wait()

    def _give(self, node: _Node) -> None:
        with self._cond:
            node.busy -= 1
            self._cond.notify()

    def _lose(self, node: _Node, exc: BaseException) -> None:
        with self._cond:
            if not node.alive:
                return
            node.alive = False
            self._counters.lost.append(LostNode(name=node.info.name, reason=f"{exc.__class__.__name__}: {exc}"[:500]))
            self._cond.notify_all()
        log.warning("lost Ray node %s: %s", node.info.name, exc.__class__.__name__)
        self._kill(node.actor)

    def run(self, job: SandboxJob) -> RawRun:
        # A node's actor cannot call back into this process while it runs: no progress lines.
        job = dataclasses.replace(job, progress=None)
        ray = self._ray
        lost_errors = self._lost_errors()
        reran = False
        while True:
            node = self._take()
            sent = time.monotonic()
            try:
                raw, inside = ray.get(
                    node.actor.run.remote(job), timeout=job.limits.timeout_s + ACQUIRE_TIMEOUT_S + ANSWER_GRACE_S
                )
            except ray.exceptions.RayTaskError as exc:  # the node answered with an error
                cause = getattr(exc, "cause", None) or exc
                raise SandboxUnavailable(f"node {node.info.name}: {cause}") from None
            except ray.exceptions.GetTimeoutError:
                raise SandboxUnavailable(f"node {node.info.name} did not answer in time") from None
            except lost_errors as exc:
                self._lose(node, exc)
                if self._closed:
                    raise SandboxUnavailable("the Ray backend was closed") from None
                if reran:
                    raise SandboxUnavailable(f"lost two nodes while running one job (last: {node.info.name})") from None
                reran = True
                with self._cond:
                    self._counters.reruns += 1
                continue
            finally:
                self._give(node)
            with self._cond:
                self._counters.jobs += 1
                self._counters.overhead_s += max(0.0, time.monotonic() - sent - inside)
            result: RawRun = raw
            # A rerun on another node after the first was lost: the evidence says it took two runs.
            return dataclasses.replace(result, attempts=result.attempts + 1) if reran else result

    def _lost_errors(self) -> tuple[type[BaseException], ...]:
        """What a call to a node's actor raises when the node (or its actor) is gone."""
        exceptions = self._ray.exceptions
        return (
            exceptions.RayActorError,  # ActorDiedError, ActorUnavailableError (a raylet just killed)
            exceptions.NodeDiedError,
            exceptions.ObjectLostError,
            exceptions.WorkerCrashedError,
        )

    def _on_live_nodes(self, call: Callable[[Any], Any]) -> list[tuple[_Node, Any]]:
        """`call(actor)` on every live node, and the answers of the nodes that answered: a node
        lost meanwhile is marked lost (as a job's run does) and left out, never an error of the
        caller's; SandboxUnavailable when no node is left."""
        sent = [(node, call(node.actor)) for node in self._live()]
        answers: list[tuple[_Node, Any]] = []
        for node, ref in sent:
            try:
                answers.append((node, self._ray.get(ref)))
            except self._lost_errors() as exc:
                self._lose(node, exc)
        if not answers:
            raise SandboxUnavailable("no Ray node is left: every node was lost")
        return answers

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        """Every live node finds or builds the environment of `spec`; all must have the same digest."""
        answers = self._on_live_nodes(lambda actor: actor.environment.remote(spec, image))
        return agreed_environment({node.info.name: answer for node, answer in answers})

    def language_image(self, language: str, image: str) -> LanguageImage:
        """Every live node finds (or builds) the language image; all must hold the same build."""
        answers = self._on_live_nodes(lambda actor: actor.language_image.remote(language, image))
        return agreed_language_image({node.info.name: answer for node, answer in answers})

    def image_id(self, image: str) -> str:
        """The image id every live node holds for `image`; SandboxUnavailable when they differ."""
        if image == self.image:
            ids = {n.image_id for n in self.nodes}
        else:
            ids = {str(answer) for _node, answer in self._on_live_nodes(lambda actor: actor.image_id.remote(image))}
        if len(ids) != 1:
            raise SandboxUnavailable(f"the Ray nodes hold {len(ids)} different builds of {image}")
        return ids.pop()

    def _live(self) -> list[_Node]:
        with self._cond:
            return [n for n in self._nodes if n.alive]

    def warm_up(self, timeout: float = 60.0) -> int:
        """Wait until every node's pool is full (or timeout); returns how many containers are idle."""
        return int(sum(answer for _node, answer in self._on_live_nodes(lambda actor: actor.warm_up.remote(timeout))))

    def stats(self) -> ClusterStats:
        with self._cond:
            c = self._counters
            return ClusterStats(
                nodes=[n.info for n in self._nodes if n.alive],
                refused=dict(self.refused),
                lost=list(c.lost),
                jobs=c.jobs,
                reruns=c.reruns,
                ray_overhead_s=c.overhead_s,
            )

    @property
    def reruns(self) -> int:
        """Jobs rerun on another node because the node that held them died."""
        with self._cond:
            return self._counters.reruns

    # -- close -------------------------------------------------------------------------
    def close(self) -> None:
        """Close every node's pool (its containers removed), then end the actors."""
        with self._cond:
            actors, self._actors = self._actors, []
            self._closed = True
            self._cond.notify_all()
        ray = self._ray
        try:
            refs = []
            for actor in actors:
                try:
                    refs.append(actor.close.remote())
                except Exception:  # noqa: BLE001 - the actor is gone; its lifeline cleans up
                    pass
            if refs:
                ray.wait(refs, num_returns=len(refs), timeout=CLOSE_TIMEOUT_S)
        finally:
            for actor in actors:
                self._kill(actor)
            if self._owns_connection and ray.is_initialized():
                self._owns_connection = False
                ray.shutdown()
            atexit.unregister(self.close)


class NodeOptions(TypedDict, total=False):
    """`RayBackend`'s settings of the nodes' pools, which `ray_verifier` passes on (its defaults)."""

    per_node: int | None
    backlog: int
    resource: str | None
    build: bool


def ray_verifier(
    address: str = "auto",
    pool: PoolConfig = CLUSTER_POOL,
    *,
    limits: Limits | None = None,
    image: str | None = None,
    **nodes: Unpack[NodeOptions],
) -> Verifier:
    """A `Verifier` on a Ray cluster: one warm pool per node. Close it to release every node's pool.
    `nodes`: per_node, backlog, resource and build, as `RayBackend` takes them.

    Give `verify_batch` `workers=verifier.backend.slots` so that every node stays busy.
    """
    limits = limits or Limits()
    image = image or image_tag()
    backend = RayBackend(pool, address=address, image=image, limits=limits, **nodes)
    return Verifier(backend=backend, image=image, limits=limits)
