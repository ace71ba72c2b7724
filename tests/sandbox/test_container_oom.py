"""Container.oom_killed asks the engine's event log when OOMKilled is not set (issue 21, section 5):
the engine sets OOMKilled only when the OOM event reached it before the exit event; under gVisor
the two often come the other way round, and the run was reported `infra_error`. A fake engine API
here: the real one is in tests/adversarial/test_fault_attribution.py."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

from verifier.sandbox import attach
from verifier.sandbox.container import Container


class Stream:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def close(self) -> None:
        self.closed = True


class Api:
    def __init__(self, state: dict[str, Any], events: list[dict[str, Any]]) -> None:
        self.state, self.events_seen, self.stream = state, 0, Stream(events)
        self.asked: dict[str, Any] = {}

    def inspect_container(self, cid: str) -> dict[str, Any]:
        return {"State": self.state, "Created": "2026-12-01T15:49:02.197178436Z"}

    def events(self, **kwargs: Any) -> Stream:
        self.asked = kwargs
        return self.stream


def container(api: Api, killed_for: str | None = None) -> Container:
    a, b = socket.socketpair()
    b.close()
    box = Container(api, "verifier-x", "cid", attach.Stream(a), "image", 1024)
    box.killed_for = killed_for
    box.eof = True
    return box


OOM = [{"Type": "container", "Action": "oom", "id": "cid"}]
EXITED_137 = {"Running": False, "ExitCode": 137, "OOMKilled": False}


def test_an_oom_event_that_came_after_the_exit_still_makes_it_oom() -> None:
    api = Api(dict(EXITED_137), OOM)
    assert container(api).oom_killed(event_wait_s=0.5)
    assert api.asked["filters"] == {"container": "cid", "event": "oom"}
    assert api.asked["since"] == "1796140141"  # 2026-12-01T15:49:01Z: its creation, a second early
    assert api.stream.closed


def test_no_oom_event_is_no_oom() -> None:
    assert not container(Api(dict(EXITED_137), [])).oom_killed(event_wait_s=0.5)


def test_only_a_sigkill_we_did_not_send_is_asked_about() -> None:
    assert not container(Api({**EXITED_137, "ExitCode": 1}, OOM)).oom_killed(event_wait_s=0.5)
    assert not container(Api(dict(EXITED_137), OOM), killed_for="timeout").oom_killed(event_wait_s=0.5)
    assert container(Api({**EXITED_137, "OOMKilled": True}, [])).oom_killed(event_wait_s=0.5)
