"""A lasting agent sandbox's own logic, without the engine: who `verifier gc` takes, the lease
(the watchdog and the renewal run for real, on this host's Python and shell), the seed
folder's bounds, what `attach` refuses, and a thread's sandbox id."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import requests

from verifier.agents.sandbox import lease
from verifier.agents.sandbox.box import DockerSandbox
from verifier.agents.sandbox.identity import command, create_kwargs, facts, live, prove
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.agents.sandbox.seed import SeedError, batches, read_seed
from verifier.agents.sandbox.threads import ThreadSandboxes
from verifier.errors import UnknownSandbox
from verifier.sandbox import container as engine
from verifier.sandbox import gc, provenance
from verifier.sandbox.hardening import LABEL_IDLE_TIMEOUT, LABEL_MANAGED, LABEL_OWNER_HOST, LABEL_OWNER_PID

HOST = socket.gethostname()
#: A bound against a hung watchdog, not a speed.
HANG_GUARD_S = 120


def labels(*, owner_alive: bool, lasting: bool, host: str = HOST) -> dict[str, str]:
    found = {LABEL_MANAGED: "1", LABEL_OWNER_PID: str(os.getpid() if owner_alive else 0), LABEL_OWNER_HOST: host}
    return {**found, LABEL_IDLE_TIMEOUT: "60"} if lasting else found


@pytest.mark.parametrize(
    ("owner_alive", "lasting", "state", "host", "taken"),
    [
        (False, False, "running", HOST, True),  # a fleeting sandbox's owner died: an orphan
        (True, False, "exited", HOST, False),  # its owner lives: theirs to remove
        (False, True, "running", HOST, False),  # lasting, owner dead, in its idle time: kept
        (True, True, "exited", HOST, True),  # lasting and ended: taken whoever made it
        (False, True, "dead", HOST, True),
        (True, True, "created", HOST, False),  # its maker is starting it right now
        (False, True, "created", HOST, True),  # its maker died before starting it
        (False, True, "exited", "elsewhere", False),  # another host's
    ],
)
def test_gc_takes_a_lasting_sandbox_once_it_has_ended_whoever_made_it(
    owner_alive: bool, lasting: bool, state: str, host: str, taken: bool
) -> None:
    entry = {"Id": "c", "State": state, "Labels": labels(owner_alive=owner_alive, lasting=lasting, host=host)}
    assert gc.orphaned(entry, HOST) is taken


class VolumesApi:
    def __init__(self, names: list[str], in_use: set[str]) -> None:
        self.names, self.in_use = names, in_use
        self.asked: list[Any] = []

    def volumes(self, filters: dict[str, Any] | None = None) -> dict[str, Any]:
        if filters is not None:
            self.asked.append(filters)
        return {"Volumes": [{"Name": n} for n in self.names]}

    def containers(self, all: bool, quiet: bool) -> list[dict[str, str]]:
        return [{"Id": "c" * 64}]

    def remove_volume(self, name: str, force: bool = False) -> None:
        if name in self.in_use:
            response = requests.Response()
            response.status_code = 409
            raise docker.errors.APIError("volume is in use", response=response)
        self.names.remove(name)


class Client:
    def __init__(self, api: Any) -> None:
        self.api = api


def test_collect_volumes_removes_our_unused_volumes_and_leaves_one_in_use_or_not_ours() -> None:
    """Ours: recorded by their maker. "c" carries our labels only: someone else's data."""
    for name in ("a", "b"):
        provenance.remember_volume(name)
    api = VolumesApi(["a", "b", "c"], in_use={"b"})
    assert gc.collect_volumes(Client(api), labels=("x=1",)) == ["a"]  # type: ignore[arg-type]
    assert api.asked == [{"label": [LABEL_MANAGED, "x=1"], "dangling": True}] and api.names == ["b", "c"]
    assert not provenance.volume_made("a") and provenance.volume_made("b")


def test_records_of_what_the_engine_no_longer_has_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container or volume removed by hand leaves its record behind: `verifier gc` drops it
    (a volume's only once past the grace in which its maker may still be making it)."""
    for cid in ("c" * 64, "d" * 64):
        provenance.remember(provenance.Made(id=cid, name="x", image="i", config_sha256="s"))
    for name in ("kept", "gone", "young"):
        provenance.remember_volume(name)
    old = time.time() - gc.VOLUME_RECORD_GRACE_S - 10
    for name in ("kept", "gone"):
        os.utime(provenance.state_dir() / "made" / "volumes" / name, (old, old))
    assert gc.prune_records(VolumesApi(["kept"], in_use=set())) == 2
    assert provenance.recorded() == (["c" * 64], sorted(["kept", "young"]))


# -- the lease ----------------------------------------------------------------------------
def test_the_lease_clock_writes_only_when_a_call_passes_its_last_write() -> None:
    clock = lease.LeaseClock(idle_s=8)
    assert clock.renew_s == 2
    assert clock.ahead(10, now=100) == 12
    clock.written(100, 12)
    assert clock.ahead(10, now=101) is None  # 111 <= 112: covered
    assert clock.ahead(10, now=103) == 12
    clock.written(90, 5)  # an older write never moves it back
    assert clock.covered == 112
    assert lease.LeaseClock(idle_s=3600).renew_s == lease.MAX_RENEW_S


@pytest.mark.parametrize("bad", [0, 0.5, -1, float("nan"), float("inf"), 8 * 24 * 3600, True, "60"])
def test_an_idle_timeout_out_of_bounds_is_refused_before_any_engine(bad: Any) -> None:
    with pytest.raises(ValueError, match="idle_timeout_s"):
        lease.check_idle_timeout(bad)
    with pytest.raises(ValueError, match="idle_timeout_s"):
        DockerSandbox(idle_timeout_s=bad, client=object())


def test_the_renewal_moves_the_lease_forward_never_back(tmp_path: Path) -> None:
    """The renewal's shell program as the container runs it (sh, date, stat, touch)."""
    file = tmp_path / "lease"
    file.touch()
    before = time.time()
    subprocess.run([*lease.renew_command(30)[:-1], str(file)], check=True, timeout=60)
    after = time.time()
    written = file.stat().st_mtime
    assert int(before) + 31 <= written <= after + 31  # whole seconds, one more for the cut fraction
    subprocess.run([*lease.renew_command(5)[:-1], str(file)], check=True, timeout=60)
    assert file.stat().st_mtime == written  # not moved back


def test_the_watchdog_waits_out_the_lease_and_then_ends(tmp_path: Path) -> None:
    """The watchdog's program on this host's Python: it writes the lease at start, then lives
    while the lease plus the idle timeout lies ahead, and ends by itself after."""
    file = tmp_path / "lease"
    until = time.time() + 3
    file.touch()
    os.utime(file, (until, until))
    dog = subprocess.Popen(argv_for(file, 0.5))
    try:
        time.sleep(0.3)
        assert dog.poll() is None  # the lease runs until `until` (start never moves it back)
        assert file.stat().st_mtime == pytest.approx(until)
        assert dog.wait(timeout=HANG_GUARD_S) == 0
        assert time.time() >= until + 0.5
    finally:
        dog.kill()
        dog.wait()
    file.unlink()
    started = time.time()
    assert subprocess.run(argv_for(file, 0.5), timeout=HANG_GUARD_S).returncode == 0  # no lease: start is the use
    assert file.stat().st_mtime >= started - 1


def argv_for(file: Path, idle_s: float) -> list[str]:
    argv = list(lease.watchdog_command(idle_s))
    argv[argv.index(lease.LEASE)] = str(file)
    return [sys.executable if a == "python3" else a for a in argv]


# -- the seed -----------------------------------------------------------------------------
def test_a_seed_is_read_whole_with_caches_left_out(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    (tmp_path / "README.md").write_bytes(b"\xffbytes")
    files = read_seed(tmp_path, max_files=10, max_bytes=100, max_file_bytes=100)
    assert files == [("README.md", b"\xffbytes"), ("pkg/a.py", b"A = 1\n")]
    assert list(batches(files, limit=6)) == [[files[0]], [files[1]]]


def test_a_seed_over_its_bounds_or_with_a_link_is_refused_naming_why(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"x" * 60)
    (tmp_path / "b.txt").write_bytes(b"y" * 60)
    with pytest.raises(SeedError, match="over the limit of 10 files and 100 bytes"):
        read_seed(tmp_path, max_files=10, max_bytes=100, max_file_bytes=100)
    with pytest.raises(SeedError, match="over the limit of 1 files"):
        read_seed(tmp_path, max_files=1, max_bytes=1000, max_file_bytes=100)
    with pytest.raises(SeedError, match=r"a\.txt of 60 bytes, over the file size limit of 50"):
        read_seed(tmp_path, max_files=10, max_bytes=1000, max_file_bytes=50)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link").symlink_to("/etc/passwd")
    with pytest.raises(SeedError, match=r"symbolic link \(sub/link\)"):
        read_seed(tmp_path, max_files=10, max_bytes=1000, max_file_bytes=100)
    with pytest.raises(SeedError, match="is not a folder"):
        read_seed(tmp_path / "a.txt", max_files=10, max_bytes=1000, max_file_bytes=100)
    with pytest.raises(SeedError, match="is not a folder"):  # before any engine is asked
        DockerSandbox(seed_from=tmp_path / "missing", client=object())


# -- attach -------------------------------------------------------------------------------
#: The SDK's own translation of create arguments (no engine: the version is given).
SDK = docker.APIClient(version="1.41")
LIMITS = AgentSandboxLimits(workspace_bytes=2 * 1024**2)


@pytest.fixture(autouse=True)
def _records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps the host's records of what it "made" in a folder of its own."""
    monkeypatch.setenv(provenance.STATE_ENV, str(tmp_path / "state"))


def record(name: str, *, running: bool = True, idle: float | None = 60.0, remember: bool = True) -> dict[str, Any]:
    """The engine's record of an agent sandbox `name` made as `create_kwargs` makes it, and (with
    `remember`) the host's record of making it."""
    volume = None if idle is None else f"{name}-workspace-1"
    kwargs = create_kwargs(name=name, image="sha256:img", limits=LIMITS, shell="/bin/sh", idle_s=idle, volume=volume)
    host = SDK.create_host_config(**kwargs.pop("host_config"))
    config = {
        "User": kwargs["user"],
        "WorkingDir": kwargs["working_dir"],
        "Cmd": list(command(idle)),
        "NetworkDisabled": True,
        "OpenStdin": kwargs["stdin_open"],
        "Tty": False,
        "Env": [f"{k}={v}" for k, v in kwargs["environment"].items()],
        "Labels": kwargs["labels"],
        "Image": "sha256:img",
    }
    found = {
        "Id": (name.encode().hex() * 64)[:64],
        "Name": "/" + name,
        "Image": "sha256:img",
        "State": {"Running": running, "Status": "running" if running else "exited"},
        "Config": config,
        "HostConfig": host,
    }
    if remember:
        kept = facts(LIMITS, "/bin/sh", idle, volume)
        made = provenance.Made(
            id=found["Id"], name=name, image="sha256:img", config_sha256=provenance.config_sha256(found), facts=kept
        )
        provenance.remember(made)
    return found


def proven_live(api: Any, found: dict[str, Any] | None, name: str) -> provenance.Made:
    made = prove(api, found, name)
    live(found or {}, made)
    return made


def test_attach_accepts_only_a_live_lasting_sandbox_this_verifier_made() -> None:
    assert proven_live(SDK, record("box"), "box").facts["volume"] == "box-workspace-1"
    labels_only = record("ghost", remember=False)  # our labels, our hardening, never recorded by us
    weak = record("weak")
    weak["HostConfig"]["ReadonlyRootfs"] = False  # a record of ours that matches it, but not hardened
    made = provenance.recall(weak["Id"])
    assert made is not None
    provenance.remember(made.model_copy(update={"config_sha256": provenance.config_sha256(weak)}))
    changed = record("changed")
    changed["HostConfig"]["Memory"] *= 2  # `docker update` after it was made
    other = record("other")
    renamed = {**other, "Name": "/box2"}  # another container's record under this id
    cases = [
        (None, "box", "missing"),
        (record("box"), "box-x", "missing"),  # an id prefix or another name: only the exact id
        (labels_only, "ghost", "foreign"),
        (weak, "weak", "foreign"),
        (changed, "changed", "foreign"),
        (renamed, "box2", "foreign"),
        (record("f", idle=None), "f", "fleeting"),
        (record("e", running=False), "e", "ended"),
        ({**record("s"), "State": {"Status": "created", "Running": False}}, "s", "starting"),
        # made, not yet recorded (its maker writes the record before it starts): not served yet
        ({**record("n", remember=False), "State": {"Status": "created", "Running": False}}, "n", "starting"),
    ]
    for found, name, why in cases:
        with pytest.raises(UnknownSandbox) as caught:
            proven_live(SDK, found, name)
        assert caught.value.why == why, (name, caught.value)
    with pytest.raises(UnknownSandbox, match="ReadonlyRootfs"):
        prove(SDK, weak, "weak")
    with pytest.raises(UnknownSandbox, match="changed since it was made"):
        prove(SDK, changed, "changed")


class InspectApi:
    def __init__(self, records: dict[str, dict[str, Any]]) -> None:
        self.records = records
        self.asked: list[str] = []

    def inspect_container(self, name: str) -> dict[str, Any]:
        self.asked.append(name)
        if name not in self.records:
            raise docker.errors.NotFound("no such container")
        return self.records[name]

    def create_host_config(self, **kwargs: Any) -> dict[str, Any]:
        return dict(SDK.create_host_config(**kwargs))


def test_attach_serves_the_sandbox_with_its_makers_limits_and_refuses_a_bad_id() -> None:
    box_record = record("box")
    api = InspectApi({"box": box_record})
    box = DockerSandbox.attach("box", client=Client(api))
    assert (box.id, box.container_id, box.shell, box.idle_timeout_s) == ("box", box_record["Id"], "/bin/sh", 60.0)
    assert box.limits.workspace_bytes == 2 * 1024**2 and box.lasting and not box.closed
    box.release()
    assert box.closed
    for bad in ("../etc", "", "x" * 200, 7):
        with pytest.raises(UnknownSandbox, match="no sandbox has the id"):
            DockerSandbox.attach(bad, client=Client(api))  # type: ignore[arg-type]
    assert api.asked == ["box"]  # a malformed id never reaches the engine
    with pytest.raises(UnknownSandbox, match="made without idle_timeout_s"):
        DockerSandbox.attach("f", client=Client(InspectApi({"f": record("f", idle=None)})))


def test_a_threads_sandbox_id_is_fixed_by_thread_and_namespace() -> None:
    one = ThreadSandboxes(client=object())
    assert one.sandbox_id("t-1") == one.sandbox_id("t-1") != one.sandbox_id("t-2")
    assert one.sandbox_id("t-1") != ThreadSandboxes(namespace="other", client=object()).sandbox_id("t-1")
    assert one.sandbox_id("t/../1").startswith("verifier-agent-t") and len(one.sandbox_id("x" * 999)) == 40
    with pytest.raises(ValueError, match="thread_id"):
        one.sandbox_id("")
    with pytest.raises(ValueError, match="names no thread"):
        one.for_config({"configurable": {}})


def test_launch_leaves_a_taken_name_alone() -> None:
    """Two processes making one thread's sandbox at once: the loser must not remove the
    winner's container (launch removes by name on every other failure)."""
    response = requests.Response()
    response.status_code = 409
    asked: list[str] = []

    class Api:
        def create_host_config(self, **kwargs: Any) -> dict[str, Any]:
            return kwargs

        def create_container(self, *_: Any, **__: Any) -> dict[str, str]:
            raise docker.errors.APIError("Conflict. The container name is already in use", response=response)

        def remove_container(self, name: str, **_: Any) -> None:
            asked.append(name)

    with pytest.raises(engine.NameTaken):
        engine.launch(
            Api(),
            name="box",
            image_id="sha256:x",
            command=["true"],
            kwargs={"host_config": {}},
            attach=None,
            attached=lambda *_: None,
        )
    assert asked == []


class Scripted:
    """Stands in for DockerSandbox in thread_sandboxes: `attach` answers from a script, a new
    sandbox is made or finds its name taken."""

    def __init__(self, attaches: list[Any], makes: list[Any]) -> None:
        self.attaches, self.makes = attaches, makes
        self.made: list[str] = []

    def attach(self, name: str, client: Any = None) -> Any:
        outcome = self.attaches.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def __call__(self, **kwargs: Any) -> Any:
        self.made.append(kwargs["name"])
        outcome = self.makes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def test_a_thread_whose_sandbox_ended_gets_a_new_one_and_a_race_loser_attaches(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.agents.sandbox import threads as thread_sandboxes

    removed: list[str] = []
    monkeypatch.setattr(thread_sandboxes, "discard", lambda api, made: removed.append(made.id))
    sandboxes = ThreadSandboxes(client=Client(InspectApi({})))
    name = sandboxes.sandbox_id("t")
    ended = record(name, running=False)
    monkeypatch.setattr(thread_sandboxes, "container_record", lambda api, n: ended)
    new, theirs = object(), object()
    script = Scripted([UnknownSandbox("ended", why="ended")], [new])
    monkeypatch.setattr(thread_sandboxes, "DockerSandbox", script)
    assert sandboxes.get_or_create("t") is new and removed == [ended["Id"]] and script.made == [name]

    starting = {**record(name, running=False), "State": {"Status": "created"}}  # its maker: this live process
    monkeypatch.setattr(thread_sandboxes, "container_record", lambda api, n: starting)
    script = Scripted([UnknownSandbox("missing", why="missing"), UnknownSandbox("s", why="starting"), theirs], [])
    script.makes = [engine.NameTaken("taken")]
    monkeypatch.setattr(thread_sandboxes, "DockerSandbox", script)
    assert sandboxes.get_or_create("u") is theirs  # lost the race, waited for the winner's start
    assert removed == [ended["Id"]]  # a sandbox its live maker is starting is never removed

    script = Scripted([UnknownSandbox("foreign", why="foreign")], [])
    monkeypatch.setattr(thread_sandboxes, "DockerSandbox", script)
    with pytest.raises(UnknownSandbox, match="foreign"):
        sandboxes.get_or_create("v")
    assert script.made == []
