"""The project's own metadata from its PEP 517 build backend, as pip gets it, computed in the sandbox.

`verifier.review.deps` reads what a tree declares as text; where that is exact (a `[project]`
table with static dependencies, setup.cfg, a setup.py whose `setup()` keywords are literals) it
is the fast path. Where metadata is dynamic (`dynamic = ["dependencies"]` in pyproject.toml,
`install_requires` or `version` computed in setup.py, `setup(**kwargs)`, a backend such as
poetry-core that keeps them in its own table) only the build backend knows it, and the backend is
the repository's code. So, as pip does (`prepare_metadata_for_build_wheel`, else `build_wheel`):

- the backend's requirements (`[build-system] requires`, or setuptools for a bare setup.py) are
  checked (index names only), resolved and downloaded **on the host** like every other
  requirement (wheels only: nothing is built on the host) into an environment image
  (`verifier.sandbox.environment`);
- the backend runs **in a sandbox container** of that image (no network, the review's hardening,
  a bounded time), on a copy of the tree; what it asks for in `get_requires_for_build_wheel` that
  is not installed is added on the host and the container runs once more;
- the host reads the answer (one nonce-bound line) as untrusted text: bounded, parsed as core
  metadata, every `Requires-Dist` checked by the one rule for requirement lines.

The answer is kept on the host by content (the tree, the environment image, the sandbox image),
so a second review of the same tree runs nothing.
"""

from __future__ import annotations

import ast
import json
import secrets
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from verifier.hashing import canonical_json, sha256_bytes
from verifier.limits import REVIEW_LIMITS, MiB
from verifier.review.gitread import Entry, to_tar
from verifier.review.setup_py import read_setup_call
from verifier.sandbox import environment as env_mod
from verifier.sandbox.backend import SandboxBackend, SandboxJob
from verifier.sandbox.container import Client
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.requirements import (
    SANDBOX_MARKERS,
    DependencyError,
    DependencySpec,
    check_requirement,
    for_sandbox,
    normalize,
)

#: PEP 517's fallback for a tree without `[build-system]` (pip's too).
LEGACY_BACKEND = "setuptools.build_meta:__legacy__"
LEGACY_REQUIRES = ("setuptools>=40.8.0",)
#: Bump when what the container answers changes: older cached answers no longer match.
FORMAT = 1
#: The most metadata text read back (real METADATA files are a few kB; a long README inlined is ~100 kB).
MAX_METADATA_BYTES = 1 * MiB
#: The most `get_requires_for_build_wheel` names added on the host (then the backend runs once more).
MAX_EXTRA_REQUIRES = 20
#: setuptools-scm finds no git history in the sandbox's copy: the version it is told instead, which
#: is then not reported as the project's version.
PRETEND_VERSION = "0.0.0+verifier.unknown"
#: What the backend may take (review's room, smaller): a build of a large project's metadata (setup.py runs)
#: is seconds.
LIMITS = REVIEW_LIMITS.model_copy(
    update={
        "timeout_s": 300.0,
        "memory_bytes": 1024 * MiB,
        "pids": 256,
        "scratch_bytes": 512 * MiB,
        "output_bytes": 4 * MiB,
    }
)
#: The keywords of setup() whose value must be a literal for the static reading to be exact.
_SETUP_KEYS = ("install_requires", "extras_require", "tests_require", "version", "name")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Dynamic:
    """Why the tree's metadata is the backend's to compute, and whether its dependencies are (else
    only its name or version: the static reading of the dependencies stays exact)."""

    reason: str
    dependencies: bool = True


@dataclass(frozen=True)
class BuildSystem:
    """The tree's `[build-system]`: the backend, where it is (`backend-path`) and what it needs."""

    backend: str
    backend_path: tuple[str, ...]
    requires: tuple[str, ...]


@dataclass(frozen=True)
class BackendMetadata:
    """The core metadata the backend produced (`Requires-Dist` lines checked, markers kept)."""

    name: str | None
    version: str | None
    requires_dist: tuple[str, ...]
    provides_extra: tuple[str, ...]
    #: Where it came from, for the evidence's sources: the backend and the hook that answered.
    source: str

    def requirements(self, *, runtime: bool, extras: tuple[str, ...]) -> list[str]:
        """The lines that apply in the sandbox: those without an extra (`runtime`) and those of
        `extras` (normalized names), their markers evaluated for the sandbox's interpreter; an
        extra that names the project itself (`proj[test]` in an extra) is followed."""
        wanted = {normalize(e) for e in extras}
        done: set[str] = set()
        out: list[str] = []
        todo = ([""] if runtime else []) + sorted(wanted)
        while todo:
            extra = todo.pop()
            if extra in done:
                continue
            done.add(extra)
            for line in self.requires_dist:
                req = Requirement(line)
                env = {**SANDBOX_MARKERS, "extra": extra}
                try:
                    applies = req.marker is None or req.marker.evaluate(env)
                except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
                    applies = False
                if extra and req.marker is None:
                    applies = False  # an unmarked line is a runtime one, not the extra's
                if not applies:
                    continue
                if self.name is not None and normalize(req.name) == normalize(self.name):
                    todo += [normalize(e) for e in req.extras]
                    continue
                out.append(str(req).split(";", 1)[0].strip())
        return sorted(set(out))


def build_system(files: Mapping[str, Entry]) -> BuildSystem:
    """The tree's `[build-system]`, or PEP 517's fallback (setuptools' legacy backend)."""
    doc = _pyproject(files)
    table = doc.get("build-system")
    if not isinstance(table, dict) or ("build-backend" not in table and "requires" not in table):
        return BuildSystem(LEGACY_BACKEND, (), LEGACY_REQUIRES)
    backend = table.get("build-backend", LEGACY_BACKEND)
    requires = table.get("requires", [])
    paths = table.get("backend-path", [])
    if not isinstance(backend, str) or not backend.strip():
        raise DependencyError("pyproject.toml [build-system] build-backend is not a string")
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        raise DependencyError("pyproject.toml [build-system] requires is not a list of strings")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise DependencyError("pyproject.toml [build-system] backend-path is not a list of strings")
    for p in paths:
        if p.startswith("/") or ".." in Path(p).parts:
            raise DependencyError(f"pyproject.toml [build-system] backend-path {p!r} is outside the tree")
    if "build-backend" not in table:
        backend = LEGACY_BACKEND
    return BuildSystem(backend.strip(), tuple(paths), tuple(requires))


def _pyproject(files: Mapping[str, Entry]) -> dict[str, object]:
    entry = files.get("pyproject.toml")
    if entry is None:
        return {}
    try:
        return tomllib.loads(entry.data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        return {}


def dynamic_reason(files: Mapping[str, Entry]) -> Dynamic | None:
    """Why reading the tree's files is not exact (its metadata is the backend's to compute), or
    None when the static reading is: no build backend asked (no setup.py, no [build-system])."""
    doc = _pyproject(files)
    project = doc.get("project")
    if isinstance(project, dict):
        dynamic = project.get("dynamic")
        fields = {str(d).lower() for d in dynamic} if isinstance(dynamic, list) else set()
        found = [f for f in ("dependencies", "optional-dependencies") if f in fields]
        return Dynamic(f"pyproject.toml [project] dynamic = {found}") if found else None
    if "setup.py" in files:
        return _setup_py_dynamic(files["setup.py"].data)
    system = doc.get("build-system")
    if isinstance(system, dict) and isinstance(system.get("build-backend"), str):
        return Dynamic(f"pyproject.toml has no [project] table: its build backend {system['build-backend']} has it")
    return None


def _setup_py_dynamic(source: bytes) -> Dynamic | None:
    """Why setup.py's `setup()` keywords are not all literals (None: they are)."""
    found = read_setup_call(source)
    if found is None:
        return Dynamic("setup.py does not parse as Python here")
    if found.call is None:
        return Dynamic("setup.py has no setup() call to read")
    if any(k.arg is None for k in found.call.keywords):
        return Dynamic("setup.py calls setup(**...)")
    computed = []
    for k in found.call.keywords:
        if k.arg in _SETUP_KEYS:
            try:
                ast.literal_eval(found.keyword(k.value))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                computed.append(k.arg)
    if not computed:
        return None
    deps = any(k in ("install_requires", "extras_require", "tests_require") for k in computed)
    return Dynamic(f"setup.py computes {', '.join(computed)}", dependencies=deps)


# The container's side: standard library and `packaging` only (both are in the sandbox image).
_SCRIPT = r"""
import importlib, importlib.metadata, io, json, os, sys, tarfile, tempfile, zipfile
nonce, spec = sys.argv[1], json.loads(sys.argv[2])
def answer(**what):
    sys.stdout.flush()
    os.write(1, ("\n" + nonce + json.dumps(what) + "\n").encode())
    sys.exit(0)
data = sys.stdin.buffer.read()
src = tempfile.mkdtemp(prefix="src-", dir="/tmp")
out = tempfile.mkdtemp(prefix="meta-", dir="/tmp")
with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    try:
        tar.extractall(src, filter="tar")
    except TypeError:  # an interpreter before extraction filters (3.11.4)
        tar.extractall(src)
os.chdir(src)
os.environ["HOME"] = "/tmp"
os.environ.setdefault("SETUPTOOLS_SCM_PRETEND_VERSION", spec["pretend"])
for path in reversed(spec["backend_path"]):
    sys.path.insert(0, os.path.join(src, path))
try:
    module, _, attrs = spec["backend"].partition(":")
    backend = importlib.import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        backend = getattr(backend, attr)
    from packaging.requirements import Requirement
    missing = []
    for line in getattr(backend, "get_requires_for_build_wheel", lambda c=None: [])({}):
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            have = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            have = None
        if have is None or not req.specifier.contains(have, prereleases=True):
            missing.append(line)
    if missing:
        answer(missing=missing)
    if hasattr(backend, "prepare_metadata_for_build_wheel"):
        folder = backend.prepare_metadata_for_build_wheel(out, {})
        with open(os.path.join(out, folder, "METADATA"), encoding="utf-8", errors="replace") as f:
            answer(metadata=f.read(), hook="prepare_metadata_for_build_wheel")
    wheel = backend.build_wheel(out, {})
    with zipfile.ZipFile(os.path.join(out, wheel)) as z:
        name = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        answer(metadata=z.read(name).decode("utf-8", "replace"), hook="build_wheel")
except SystemExit:
    raise
except BaseException as exc:
    answer(error=(type(exc).__name__ + ": " + str(exc))[:500])
"""


def _run_backend(
    client: Client | None,
    files: Mapping[str, Entry],
    system: BuildSystem,
    extra: tuple[str, ...],
    sandbox: str,
    say: Progress,
    backend: SandboxBackend | None,
) -> dict[str, object]:
    """One run of the backend in a container of an environment with its requirements (+ `extra`),
    on `backend` (a cluster's node) or `client`'s engine."""
    spec = _backend_spec(system, extra)
    if backend is not None:
        engine: SandboxBackend = backend
        env = backend.environment(spec, sandbox)
    else:
        local = DockerBackend(client)
        engine, env = local, env_mod.ensure(local, spec, sandbox, say)
    nonce = secrets.token_hex(16)
    what = {"backend": system.backend, "backend_path": list(system.backend_path), "pretend": PRETEND_VERSION}
    job = SandboxJob(
        image=env.image_ref,
        command=["python3", "-c", _SCRIPT, nonce, json.dumps(what)],
        limits=LIMITS,
        stdin=to_tar(dict(files)),
        mode="plain",
    )
    raw = engine.run(job)
    return _answer(raw.stdout, nonce, system, raw.timed_out, raw.exit_code)


def _backend_spec(system: BuildSystem, extra: tuple[str, ...]) -> DependencySpec:
    reqs: list[str] = []
    for i, line in enumerate((*system.requires, *extra)):
        where = "pyproject.toml [build-system] requires" if i < len(system.requires) else "get_requires_for_build_wheel"
        kept = for_sandbox(line, where)
        if kept is not None:
            reqs.append(kept)
    return DependencySpec(tuple(sorted(set(reqs))), ("pyproject.toml [build-system] requires",))


def _answer(
    stdout: bytes, nonce: str, system: BuildSystem, timed_out: bool, exit_code: int | None
) -> dict[str, object]:
    """The container's one answer line (the last that starts with the nonce), bounded and checked."""
    marker = nonce.encode()
    lines = [ln for ln in stdout.splitlines() if ln.startswith(marker)]
    if not lines:
        why = "it was killed at the time limit" if timed_out else f"it exited {exit_code} without an answer"
        raise DependencyError(
            f"the build backend {system.backend} could not compute the project's metadata in the sandbox ({why}); "
            "name the dependencies with --requirements"
        )
    body = lines[-1][len(marker) :]
    if len(body) > 2 * MAX_METADATA_BYTES:
        raise DependencyError(f"the build backend {system.backend} answered more than {MAX_METADATA_BYTES} bytes")
    try:
        found = json.loads(body)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise DependencyError(f"the build backend {system.backend}'s answer in the sandbox is not readable")
    return found


def compute(
    client: Client | None,
    files: Mapping[str, Entry],
    tree_id: str,
    sandbox: str,
    say: Progress | None = None,
    backend: SandboxBackend | None = None,
) -> BackendMetadata:
    """The tree's metadata from its build backend, run in the sandbox (see the module docstring).

    Raises DependencyError (an InvalidInput: exit 2, naming --requirements) when the backend's
    requirements cannot be resolved, or the backend fails or gives no usable metadata."""
    talk = say or (lambda _m: None)
    system = build_system(files)
    key = sha256_bytes(canonical_json({"format": FORMAT, "tree": tree_id, "system": [system.backend,
                       list(system.backend_path), list(system.requires)], "sandbox": sandbox}))  # fmt: skip
    cache = env_mod.cache_dir("review") / "metadata" / f"{key}.json"
    try:
        cached = json.loads(cache.read_text())
        return parse(str(cached["metadata"]), str(cached["source"]))
    except (OSError, ValueError, KeyError, TypeError, DependencyError):
        pass  # absent or unreadable: compute it
    talk(f"computing the project's metadata with its build backend {system.backend} in the sandbox")
    extra: tuple[str, ...] = ()
    for _round in range(2):
        found = _run_backend(client, files, system, extra, sandbox, talk, backend)
        missing = found.get("missing")
        if missing is None:
            break
        if not isinstance(missing, list) or not missing or len(missing) > MAX_EXTRA_REQUIRES or extra:
            raise DependencyError(
                f"the build backend {system.backend} needs requirements that cannot be provided ({missing!r:.200}); "
                "name the dependencies with --requirements"
            )
        extra = tuple(check_requirement(str(m), "get_requires_for_build_wheel") for m in missing)
    if "error" in found:
        raise DependencyError(
            f"the build backend {system.backend} failed in the sandbox: {str(found['error'])[:300]}; "
            "name the dependencies with --requirements"
        )
    text, hook = found.get("metadata"), found.get("hook")
    if not isinstance(text, str) or not isinstance(hook, str) or len(text.encode()) > MAX_METADATA_BYTES:
        raise DependencyError(f"the build backend {system.backend} gave no usable metadata")
    source = f"build backend {system.backend} ({hook}, in the sandbox)"
    meta = parse(text, source)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{secrets.token_hex(4)}.tmp")
    tmp.write_text(json.dumps({"metadata": text, "source": source}))
    tmp.replace(cache)
    return meta


def parse(text: str, source: str) -> BackendMetadata:
    """Core metadata (RFC 822 headers) as untrusted text: every Requires-Dist line checked."""
    if len(text.encode("utf-8", "replace")) > MAX_METADATA_BYTES:
        raise DependencyError(f"{source}: the metadata is over {MAX_METADATA_BYTES} bytes")
    headers = HeaderParser().parsestr(text)
    lines: list[str] = []
    for raw in headers.get_all("Requires-Dist") or []:
        line = check_requirement(str(raw), f"{source} Requires-Dist")
        try:
            Requirement(line)
        except InvalidRequirement as exc:  # check_requirement parsed it already; kept for the type checker
            raise DependencyError(f"{source}: {line!r}: {exc}") from None
        lines.append(line)
    name, version = headers.get("Name"), headers.get("Version")
    version = None if version is None or str(version).strip() == PRETEND_VERSION else str(version).strip()
    return BackendMetadata(
        name=str(name).strip() if name else None,
        version=version,
        requires_dist=tuple(lines),
        provides_extra=tuple(str(e).strip() for e in headers.get_all("Provides-Extra") or []),
        source=source,
    )
