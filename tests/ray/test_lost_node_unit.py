"""RayBackend's own logic when a node is lost during a call to every node (an environment, an
image id, a warm-up), with a stand-in for Ray's module: the node is marked lost and left out,
as a job's run does, never an error of the caller's (the real cluster's test, a node killed
mid-batch, met ActorUnavailableError in `environment` and failed the whole batch)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from verifier.cluster.backend import RayBackend, _Counters, _Node
from verifier.cluster.node import NodeInfo
from verifier.errors import SandboxUnavailable
from verifier.sandbox.backend import LanguageImage


class RayActorError(Exception):
    pass


class ActorUnavailableError(RayActorError):
    pass


class _Other(Exception):
    pass


FAKE_RAY = SimpleNamespace(
    exceptions=SimpleNamespace(
        RayActorError=RayActorError, NodeDiedError=_Other, ObjectLostError=_Other, WorkerCrashedError=_Other
    ),
    get=lambda ref: ref(),  # a "reference" here is the call that answers it
    kill=lambda actor, no_restart=True: None,
)


def node(name: str, answer: Callable[[], Any]) -> _Node:
    info = NodeInfo(
        node_id=name, name=name, hostname="h", pid=1, pool_id="p", size=1, image="i", image_id="sha256:i", built=False
    )
    actor = SimpleNamespace(
        environment=SimpleNamespace(remote=lambda spec, image: answer),
        image_id=SimpleNamespace(remote=lambda image: answer),
        warm_up=SimpleNamespace(remote=lambda timeout: answer),
        language_image=SimpleNamespace(remote=lambda language, image: answer),
    )
    return _Node(info=info, actor=actor, cap=1)


def backend(*nodes: _Node) -> RayBackend:
    b = object.__new__(RayBackend)  # our logic only: no cluster behind it
    b._ray = FAKE_RAY
    b.image = "verifier-sandbox:x"
    b._nodes = list(nodes)
    b._cond = threading.Condition()
    b._counters = _Counters()
    b._closed = False
    return b


def gone() -> Any:
    raise ActorUnavailableError("The actor is temporarily unavailable: RpcError: Socket closed")


def test_a_node_lost_during_a_call_to_every_node_is_left_out_and_counted() -> None:
    b = backend(node("a", lambda: 2), node("victim", gone), node("c", lambda: 3))
    assert b.warm_up() == 5
    assert [n.info.name for n in b._live()] == ["a", "c"]
    assert [lost.name for lost in b._counters.lost] == ["victim"]
    with pytest.raises(SandboxUnavailable, match="different builds"):
        b.image_id("other:tag")  # the two left answered 2 and 3: they differ
    same = backend(node("a", lambda: "sha256:x"), node("victim", gone), node("c", lambda: "sha256:x"))
    assert same.image_id("other:tag") == "sha256:x"
    assert [lost.name for lost in same._counters.lost] == ["victim"]


def test_every_node_lost_is_sandbox_unavailable_and_other_errors_are_not_swallowed() -> None:
    with pytest.raises(SandboxUnavailable, match="no Ray node is left"):
        backend(node("x", gone), node("y", gone)).warm_up()

    def broken() -> Any:
        raise ValueError("a bug of ours, not a lost node")

    with pytest.raises(ValueError, match="a bug of ours"):
        backend(node("z", broken)).warm_up()


def built(image_id: str, toolchain: tuple[str, ...] = ("g++=12.2",)) -> Callable[[], LanguageImage]:
    return lambda: LanguageImage(language="cpp", tag="verifier-lang:x", image_id=image_id, toolchain=toolchain)


def test_the_language_image_is_every_nodes_one_build_or_the_node_that_differs_is_named() -> None:
    """A program in another language runs on the Ray backend only when every node holds the same
    language image (its id is in the evidence and the planned evidence id, its toolchain in both):
    a node lost meanwhile is left out, as for any call to every node."""
    same = backend(node("a", built("sha256:x")), node("victim", gone), node("c", built("sha256:x")))
    assert same.language_image("cpp", "verifier-sandbox:x").image_id == "sha256:x"
    assert [lost.name for lost in same._counters.lost] == ["victim"]
    with pytest.raises(SandboxUnavailable, match=r"node c has verifier-lang:x as sha256:y.*node a"):
        backend(node("a", built("sha256:x")), node("c", built("sha256:y"))).language_image("cpp", "i")
    with pytest.raises(SandboxUnavailable, match="load one language image on every node"):
        backend(node("a", built("sha256:x")), node("c", built("sha256:x", ("g++=13",)))).language_image("cpp", "i")
    refused = backend(node("a", built("sha256:x")), node("c", lambda: "node c cannot provide the cpp image: no root"))
    with pytest.raises(SandboxUnavailable, match="node c cannot provide the cpp image: no root"):
        refused.language_image("cpp", "i")
