"""Proof that a container (or volume) is one this verifier made, as it made it: a record on the
host, written when it is made, that neither the container nor its labels can write.

Labels are a self-description: anyone who can reach the engine can put ours on a container of
their own (root, a writable root, a network). So what outlives its maker and is found again
later (a lasting agent sandbox, its workspace volume) is recognised by a record, not by labels:

- **where**: one file per container, named by its id, in a directory only this user can write
  (`state_dir()`: `$VERIFIER_STATE_DIR`, else /var/lib/verifier for root, else
  `$XDG_STATE_HOME/verifier`), refused when the directory or the file is a link, another user's,
  or writable by group or others. A container has no mount of it, so nothing inside can change
  it; a label cannot name it, since the file is found by the engine's id of the container.
- **what**: the container's id and name, the image id it runs, what its maker needs to serve it
  again (`facts`: for the agent's sandbox its limits, shell, idle timeout and volume), and the
  SHA-256 of its whole configuration as the engine reported it right after creation
  (`config_sha256`: HostConfig and Config, so a `docker update` of a limit, a rename or a
  second container of the same name no longer matches).
- **bounds**: a record is at most MAX_RECORD_BYTES; it is removed with its container (`forget`:
  by the maker's close and by every sweep of `gc`), and `verifier gc` drops the records of
  containers and volumes the engine no longer has (removed by hand, say), so the directory holds
  one small file per container and volume of ours.

Matching the record proves *which* container this is; `mismatches` then compares the
container's actual configuration with the create arguments `hardening` would produce for it,
so a record of a container made wrongly (or by an older version) is refused too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from verifier.errors import SandboxUnavailable

#: Overrides where the records live (a directory this user owns; made 0700 if missing).
STATE_ENV = "VERIFIER_STATE_DIR"
#: Largest record read (the agent sandbox's is under 1 KiB).
MAX_RECORD_BYTES = 64 * 1024
#: An engine container id: what names a record's file.
CONTAINER_ID = re.compile(r"[0-9a-f]{64}")
#: A volume name as the engine allows one.
VOLUME_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}")
#: Host settings a container of ours never has (their engine defaults: empty, false or "").
NEVER_SET = (
    "Privileged",
    "Binds",
    "VolumesFrom",
    "Devices",
    "DeviceRequests",
    "DeviceCgroupRules",
    "CapAdd",
    "Links",
    "PortBindings",
    "PublishAllPorts",
    "ExtraHosts",
    "GroupAdd",
    "PidMode",
    "UTSMode",
    "UsernsMode",
    "CgroupParent",
    "OomKillDisable",
    "VolumeDriver",
)


class ProvenanceError(SandboxUnavailable):
    """The records cannot be kept safely (their directory is a link, another user's, or writable
    by others) or written."""


class Made(BaseModel):
    """The host's record of one container this verifier made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """The engine's id of the container."""
    name: str
    """Its name, without the engine's leading '/'."""
    image: str
    """The id of the image it runs."""
    config_sha256: str
    """`config_sha256` of the engine's record of it, read right after it was created."""
    facts: dict[str, str] = {}
    """What its maker needs to serve it again (maker-specific)."""


def state_dir() -> Path:
    """The root of this user's records (not made here)."""
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV])
    if os.geteuid() == 0:
        return Path("/var/lib/verifier")
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "verifier"


def _safe_dir(path: Path) -> Path:
    """`path`, made 0700 if missing; ProvenanceError when it is a link, another user's or
    writable by group or others."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise ProvenanceError(f"cannot keep sandbox records in {path}: {exc.strerror}") from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise ProvenanceError(
            f"refusing the sandbox records in {path}: it must be a directory of this user that "
            "no one else can write (not a link)"
        )
    return path


def _kind_dir(kind: str) -> Path:
    root = _safe_dir(state_dir())
    return _safe_dir(_safe_dir(root / "made") / kind)


def config_sha256(record: Mapping[str, Any]) -> str:
    """SHA-256 of what the engine says a container is: its id, name, image and whole
    configuration (HostConfig, Config). Its state (running, pid, times) is left out."""
    keys = ("Id", "Name", "Image", "HostConfig", "Config")
    text = json.dumps({key: record.get(key) for key in keys}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remember(made: Made) -> None:
    """Write the record of container `made.id` (replacing one of that id). Raises ProvenanceError."""
    if not CONTAINER_ID.fullmatch(made.id):
        raise ProvenanceError(f"not a container id: {made.id[:80]!r}")
    try:
        _write(_kind_dir("containers") / f"{made.id}.json", made.model_dump_json().encode())
    except OSError as exc:
        raise ProvenanceError(f"cannot write the record of container {made.name}: {exc.strerror}") from exc


def _read(path: Path) -> bytes | None:
    """The bytes of record file `path` (None when there is none); ProvenanceError when it is not
    a plain file of this user that only this user can write, or is over MAX_RECORD_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ProvenanceError(f"the record {path.name} cannot be read: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise ProvenanceError(f"the record {path.name} is not a file only this user can write")
        data = fh.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise ProvenanceError(f"the record {path.name} is over {MAX_RECORD_BYTES} bytes")
    return data


def recall(container_id: str) -> Made | None:
    """The record of container `container_id`, None when this verifier has none (or it cannot be
    read as one). Raises ProvenanceError when the records are not kept safely."""
    if not CONTAINER_ID.fullmatch(container_id):
        return None
    data = _read(_kind_dir("containers") / f"{container_id}.json")
    if data is None:
        return None
    try:
        return Made.model_validate_json(data)
    except ValidationError:
        return None


def forget(container_id: str) -> None:
    """Remove the record of container `container_id` (none is no error)."""
    if CONTAINER_ID.fullmatch(container_id):
        with contextlib.suppress(FileNotFoundError, ProvenanceError):
            os.unlink(_kind_dir("containers") / f"{container_id}.json")


def remember_volume(name: str) -> None:
    """Record that this verifier made volume `name`. Raises ProvenanceError."""
    if not VOLUME_NAME.fullmatch(name):
        raise ProvenanceError(f"not a volume name: {name[:80]!r}")
    try:
        _write(_kind_dir("volumes") / name, b"")
    except OSError as exc:
        raise ProvenanceError(f"cannot write the record of volume {name}: {exc.strerror}") from exc


def volume_made(name: str) -> bool:
    """Whether this verifier recorded making volume `name`."""
    if not VOLUME_NAME.fullmatch(name):
        return False
    try:
        return _read(_kind_dir("volumes") / name) is not None
    except ProvenanceError:
        return False


def forget_volume(name: str) -> None:
    """Remove the record of volume `name` (none is no error)."""
    if VOLUME_NAME.fullmatch(name):
        with contextlib.suppress(FileNotFoundError, ProvenanceError):
            os.unlink(_kind_dir("volumes") / name)


def recorded(min_age_s: float = 0.0) -> tuple[list[str], list[str]]:
    """(container ids, volume names) this verifier holds records of, those of volumes only when
    written at least `min_age_s` ago (a volume's record is written before the engine makes it).
    Raises ProvenanceError when the records are not kept safely."""
    now = time.time()
    ids = [p.stem for p in _kind_dir("containers").glob("*.json") if CONTAINER_ID.fullmatch(p.stem)]
    volumes = []
    for path in _kind_dir("volumes").iterdir():
        with contextlib.suppress(OSError):
            if VOLUME_NAME.fullmatch(path.name) and now - path.lstat().st_mtime >= min_age_s:
                volumes.append(path.name)
    return sorted(ids), sorted(volumes)


def proven(record: Mapping[str, Any], made: Made | None) -> str | None:
    """Why the engine's `record` of a container is not the container `made` records (None: it is)."""
    if made is None:
        return "this verifier has no record of making it (its labels alone prove nothing)"
    name = str(record.get("Name", "")).lstrip("/")
    if made.id != record.get("Id") or made.name != name:
        return "the record found under its id is another container's"
    if made.image != record.get("Image"):
        return "it runs another image than the one it was made with"
    if made.config_sha256 != config_sha256(record):
        return "its configuration changed since it was made"
    return None


def _same(expected: Any, actual: Any) -> bool:
    """Whether the engine's `actual` value is `expected`: a dict's keys as expected (a false
    expected value may be absent), a list element by element, anything else equal."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        return all(_same(value, actual.get(key)) if value else not actual.get(key) for key, value in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(_same, expected, actual))
    return bool(expected == actual)


def mismatches(
    record: Mapping[str, Any], create: Mapping[str, Any], host: Mapping[str, Any], image: str
) -> Iterator[str]:
    """What in the engine's `record` of a container differs from how `hardening` makes it: the
    create arguments `create` (user, working dir, command, environment, no network), the host
    configuration `host` in the engine's form (`container.engine_host_config`: read-only root,
    network none, capabilities, no-new-privileges, memory, CPU, pids, ulimits, tmpfs, mounts,
    runtime, init), settings we never use (`NEVER_SET`: privileged, binds, devices, ...) and
    image `image`. Labels are not compared (the record's digest covers them)."""
    config, actual = record.get("Config") or {}, record.get("HostConfig") or {}
    for key, want in host.items():
        if not _same(want, actual.get(key)):
            yield f"HostConfig.{key}"
    for key in NEVER_SET:
        if actual.get(key):
            yield f"HostConfig.{key}"
    wanted = {
        "User": create.get("user"),
        "WorkingDir": create.get("working_dir"),
        "Cmd": list(create.get("command") or []),
        "NetworkDisabled": create.get("network_disabled"),
        "OpenStdin": create.get("stdin_open"),
        "Tty": create.get("tty"),
    }
    for key, want in wanted.items():
        if not _same(want, config.get(key)):
            yield f"Config.{key}"
    env = set(config.get("Env") or [])
    if not all(f"{key}={value}" in env for key, value in (create.get("environment") or {}).items()):
        yield "Config.Env"
    if record.get("Image") != image or config.get("Image") != image:
        yield "Image"
