"""The engine's home and the one sweep on a fake engine API (no engine): errors translated,
nothing left behind by a start that fails, a sweep that waits for an engine that is away."""

from __future__ import annotations

import socket
from typing import Any

import docker.errors
import pytest
import requests.exceptions

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.limits import Limits
from verifier.sandbox import container as engine
from verifier.sandbox import gc
from verifier.sandbox.hardening import LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID
from verifier.sandbox.runtime import RuntimeNotRegistered


class Api:
    """What a test asked of the engine; `fail` maps a request to what it raises."""

    def __init__(self, fail: dict[str, BaseException] | None = None) -> None:
        self.fail = fail or {}
        self.asked: list[tuple[str, Any]] = []
        self.listed: list[list[dict[str, Any]]] = []

    def _ask(self, what: str, arg: Any = None) -> None:
        self.asked.append((what, arg))
        if what in self.fail:
            raise self.fail[what]

    def create_host_config(self, **kwargs: Any) -> dict[str, Any]:
        self._ask("create_host_config")
        return kwargs

    def create_container(self, image: str, **kwargs: Any) -> dict[str, str]:
        self._ask("create_container", kwargs["name"])
        return {"Id": "cid-1"}

    def attach_socket(self, cid: str, params: dict[str, int]) -> str:
        self._ask("attach_socket", params)
        return "socket"

    def start(self, cid: str) -> None:
        self._ask("start", cid)

    def remove_container(self, name: str, **_: Any) -> None:
        self._ask("remove_container", name)

    def kill(self, cid: str) -> None:
        self._ask("kill", cid)

    def inspect_image(self, ref: str) -> dict[str, str]:
        self._ask("inspect_image", ref)
        return {"Id": "sha256:abc"}

    def info(self) -> dict[str, Any]:
        self._ask("info")
        return {"Runtimes": {"runc": {}}}

    def containers(self, **kwargs: Any) -> list[dict[str, Any]]:
        self._ask("containers", kwargs)
        return self.listed.pop(0) if self.listed else []


def launch(api: Api, **kwargs: Any) -> str:
    seen: list[tuple[str, Any]] = []
    return engine.launch(
        api,
        name="verifier-x",
        image_id="sha256:abc",
        command=("true",),
        kwargs={"host_config": {}},
        attach={"stdin": 1},
        attached=lambda cid, sock: seen.append((cid, sock)),
        **kwargs,
    )


def test_translated_turns_the_engines_errors_into_ours_and_passes_the_rest() -> None:
    with pytest.raises(engine.EngineError, match=r"^doing it: gone$") as caught, engine.translated("doing it"):
        raise requests.exceptions.ConnectionError("gone")
    assert isinstance(caught.value, SandboxUnavailable)
    assert isinstance(caught.value.__cause__, requests.exceptions.ConnectionError)
    with pytest.raises(engine.EngineError, match=r"^500 Server Error"), engine.translated():
        raise docker.errors.APIError("500 Server Error")
    with pytest.raises(KeyError), engine.translated("doing it"):
        raise KeyError("ours")


def test_launch_creates_attaches_before_it_starts() -> None:
    api = Api()
    assert launch(api) == "cid-1"
    assert [what for what, _ in api.asked] == ["create_host_config", "create_container", "attach_socket", "start"]


@pytest.mark.parametrize("failing", ["create_container", "attach_socket", "start"])
def test_a_start_that_fails_leaves_nothing_behind(failing: str) -> None:
    api = Api({failing: docker.errors.APIError("refused")})
    with pytest.raises(SandboxUnavailable, match=r"^the agent's sandbox could not start: refused$"):
        launch(api, what="the agent's sandbox")
    assert api.asked[-1] == ("remove_container", "verifier-x")  # by name: also before the create answered


def test_ctrl_c_during_a_start_removes_it_and_goes_on() -> None:
    api = Api({"start": KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        launch(api)
    assert api.asked[-1] == ("remove_container", "verifier-x")


def test_a_missing_runtime_is_named_when_the_limits_are_given() -> None:
    api = Api({"create_container": docker.errors.APIError("unknown or invalid runtime name: runsc")})
    with pytest.raises(RuntimeNotRegistered):
        launch(api, limits=Limits(runtime="gvisor"))
    api = Api({"create_container": docker.errors.APIError("unknown or invalid runtime name: runsc")})
    with pytest.raises(SandboxUnavailable, match="could not start") as caught:
        launch(api)
    assert not isinstance(caught.value, RuntimeNotRegistered)


def test_image_id_says_not_built_or_unavailable() -> None:
    assert engine.image_id(Api(), "verifier-sandbox:x") == "sha256:abc"
    missing = Api({"inspect_image": docker.errors.ImageNotFound("No such image")})
    with pytest.raises(ImageNotFound, match="verifier image build"):
        engine.image_id(missing, "verifier-sandbox:x")
    away = Api({"inspect_image": requests.exceptions.ConnectionError("refused")})
    with pytest.raises(SandboxUnavailable, match=r"^cannot inspect image 'verifier-sandbox:x': refused$"):
        engine.image_id(away, "verifier-sandbox:x")
    assert engine.inspect_image(missing, "verifier-sandbox:x") is None


class Client:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_sweep_retries_while_the_engine_is_away(monkeypatch: pytest.MonkeyPatch) -> None:
    api = Api()
    api.listed = [[{"Id": "a"}, {"Id": "b"}], [{"Id": "b"}], [{"Id": "b"}], []]
    tries: list[Client] = []

    def connect() -> Client:
        if len(tries) < 2:
            tries.append(Client(Api()))
            raise SandboxUnavailable("the Docker engine is not answering")
        tries.append(Client(api))
        return tries[-1]

    monkeypatch.setattr(gc, "connect", connect)
    assert gc.sweep(("pool=1",), timeout_s=30, pause_s=0.01) == ["a", "b", "b"]
    assert len(tries) == 4 and all(t.closed for t in tries[2:])
    listing = [arg for what, arg in api.asked if what == "containers"]
    assert all(arg["filters"] == {"label": [LABEL_MANAGED, "pool=1"]} and arg["all"] for arg in listing)


def test_sweep_gives_up_at_its_timeout_and_kills_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    def away() -> Client:
        raise SandboxUnavailable("the Docker engine is not answering")

    monkeypatch.setattr(gc, "connect", away)
    assert gc.sweep(("pool=1",), timeout_s=0.05, pause_s=0.01) == []
    api = Api()
    api.listed = [[{"Id": "a"}]]
    monkeypatch.setattr(gc, "connect", lambda: Client(api))
    assert gc.sweep(("review=1",), kill_only=True) == ["a"]
    assert [(w, a) for w, a in api.asked if w != "containers"] == [("kill", "a")]
    assert api.asked[0][1]["all"] is False  # only running containers are killed


def test_collect_takes_orphans_of_this_host_only() -> None:
    api = Api()
    mine = {LABEL_MANAGED: "1", LABEL_OWNER_PID: "0", LABEL_OWNER_HOST: socket.gethostname()}
    theirs = {**mine, LABEL_OWNER_HOST: "elsewhere"}
    api.listed = [[{"Id": "orphan", "Labels": mine}, {"Id": "other-host", "Labels": theirs}]]
    assert gc.collect(Client(api)) == ["orphan"]  # type: ignore[arg-type]
    api.listed = [[{"Id": "orphan", "Labels": mine}, {"Id": "other-host", "Labels": theirs}]]
    assert gc.collect(Client(api), everything=True) == ["orphan", "other-host"]  # type: ignore[arg-type]
    failing = Api({"containers": requests.exceptions.ConnectionError("refused")})
    with pytest.raises(SandboxUnavailable):
        gc.collect(Client(failing))  # type: ignore[arg-type]
