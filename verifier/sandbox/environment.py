"""Environment images: declared requirements, installed offline on the sandbox image.

The one home of this machinery, for `verifier review` (a repository's dependencies) and for
suites (`suite.toml` `requirements`, or a suite's `requirements.txt`; `verifier.suite`).

On a cache miss the dependencies are resolved and downloaded **on the host** (``pip
download``, wheels only, with the machine's package index, for the sandbox's interpreter and
platform, constrained to the sandbox's own pinned pytest/Hypothesis), then installed with no
network into an image built ``FROM`` the sandbox image. The image is tagged and labelled with
a digest of the requirement lines, the sandbox's pins and the sandbox image id, so a second
run with the same requirements finds it and builds (and downloads) nothing. The label also
lists the packages installed and the top-level modules they define (`modules`: names a
candidate may not take, `verifier.runner.trees`). Builds on one machine take turns (the image
build lock), and a build that finds the image made meanwhile builds nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from verifier.errors import SandboxUnavailable
from verifier.hashing import canonical_json, sha256_bytes
from verifier.limits import Limits
from verifier.sandbox.backend import ENV_REPO, Environment, RawRun, SandboxJob, env_tag
from verifier.sandbox.container import Client, inspect_image, translated
from verifier.sandbox.image import LABEL_BUILT_ON, build_image, build_lock, recipe_dir
from verifier.sandbox.requirements import DependencyError, DependencySpec, normalize

LABEL_ENV = "org.verifier.env"
LABEL_PACKAGES = "org.verifier.env.packages"
LABEL_MODULES = "org.verifier.env.modules"
#: Bump when the way environments are built changes: old images then no longer match.
ENV_FORMAT = 2
_PIP_TIMEOUT_S = 900

Progress = Callable[[str], None]

__all__ = ["ENV_REPO", "Environment", "describe", "ensure", "env_tag", "find"]


class EngineBackend(Protocol):
    """What building an environment needs of a backend (`DockerBackend`): its engine and a job run."""

    @property
    def client(self) -> Client: ...

    def run(self, job: SandboxJob) -> RawRun: ...


_PROBE = (
    "import json, sys; from packaging import tags; t = list(tags.sys_tags());"
    "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], 'interpreter': t[0].interpreter,"
    "'abis': sorted({x.abi for x in t}), 'platforms': sorted({x.platform for x in t})}))"
)


def sandbox_pins() -> tuple[str, ...]:
    """The sandbox image's pinned packages (pytest, Hypothesis, ...): constraints for every environment."""
    text = (recipe_dir() / "requirements.txt").read_text()
    return tuple(ln.split("#")[0].strip() for ln in text.splitlines() if ln.split("#")[0].strip())


def spec_digest(spec: DependencySpec, base_image_id: str) -> str:
    return sha256_bytes(
        canonical_json(
            {
                "format": ENV_FORMAT,
                "requirements": list(spec.requirements),
                "constraints": list(sandbox_pins()),
                "base_image_id": base_image_id,
            }
        )
    )


def cache_dir(name: str = "environments") -> Path:
    """A cache folder of verifier's on the host (XDG cache): platform probes and pip for
    environment builds here; `review` keeps its base runs in its own."""
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "verifier" / name
    root.mkdir(parents=True, exist_ok=True)
    return root


@dataclass(frozen=True)
class Found:
    """An environment image present on an engine, read from its labels."""

    image_id: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]


def find(client: Client, digest: str) -> Found | None:
    """The environment image with this digest on `client`'s engine, or None."""
    meta = inspect_image(client.api, env_tag(digest))
    if meta is None:
        return None
    labels = meta.get("Config", {}).get("Labels") or {}
    if labels.get(LABEL_ENV) != digest:
        return None  # a prefix collision or a stale image: treat as absent
    packages = tuple(json.loads(labels.get(LABEL_PACKAGES, "[]")))
    return Found(str(meta["Id"]), packages, tuple(json.loads(labels.get(LABEL_MODULES, "[]"))))


def ensure(
    backend: EngineBackend, spec: DependencySpec, base_ref: str, progress: Progress | None = None
) -> Environment:
    """The environment image for `spec` on the sandbox image `base_ref`, built only if missing,
    on `backend`'s engine (which also runs the probe of the sandbox's platform).

    Raises:
        DependencyError: a dependency cannot be resolved from the index (names it).
        SandboxUnavailable: the engine or the image build failed.
    """
    say = progress or (lambda _m: None)
    client = backend.client
    api: Any = client.api
    with translated(f"cannot inspect the sandbox image {base_ref}"):
        base_id = str(api.inspect_image(base_ref)["Id"])
    digest = spec_digest(spec, base_id)
    if not spec.requirements:
        return Environment(digest, base_id, base_id, built=False, packages=(), spec=spec)
    found = find(client, digest)
    if found is None:
        with build_lock():
            found = find(client, digest)  # built by another process while this one waited
            if found is None:
                return _build_env(backend, spec, base_id, digest, say)
    return Environment(
        digest, found.image_id, found.image_id, built=False, packages=found.packages, spec=spec, modules=found.modules
    )


def _build_env(backend: EngineBackend, spec: DependencySpec, base_id: str, digest: str, say: Progress) -> Environment:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="verifier-env-") as tmp:
        ctx = Path(tmp)
        say(f"resolving {len(spec.requirements)} declared dependencies on the host")
        wheels = download(spec, probe_target(backend, base_id), ctx / "wheels" / "pkgs")
        pins = {normalize(p.split("==")[0]): p.split("==")[1] for p in sandbox_pins()}
        packages: list[str] = []
        modules: set[str] = set()
        for wheel in list(wheels):
            name, version = _wheel_name_version(wheel.name)
            if pins.get(normalize(name)) == version:
                wheel.unlink()  # already in the sandbox image, at this version
                continue
            packages.append(f"{name}=={version}")
            modules |= wheel_modules(wheel)
        packages.sort(key=str.lower)
        pip_wheel = _pip_wheel()
        shutil.copy2(pip_wheel, ctx / "wheels" / pip_wheel.name)
        (ctx / "Dockerfile").write_text(_dockerfile(base_id, pip_wheel.name, bool(packages)))
        say(f"building the environment image ({len(packages)} packages, offline)")
        image_id = _build(backend.client, ctx, digest, base_id, packages, sorted(modules))
    return Environment(
        digest,
        image_id,
        image_id,
        built=True,
        packages=tuple(packages),
        spec=spec,
        build_s=time.monotonic() - started,
        modules=tuple(sorted(modules)),
    )


def wheel_modules(wheel: Path) -> set[str]:
    """The top-level modules a wheel installs: the first component of each path it holds that
    is not its metadata (a package folder, a module file or an extension module)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops: set[str] = set()
    for name in names:
        top, sep, _ = name.partition("/")
        if top.endswith((".dist-info", ".data")):
            continue
        module = top if sep else top.split(".")[0] if top.endswith((".py", ".so", ".pyd")) else ""
        if module.isidentifier():
            tops.add(module)
    return tops


def _dockerfile(base_id: str, pip_wheel: str, install: bool) -> str:
    lines = [f"FROM {base_id}"]
    if install:
        lines += [
            "USER 0:0",
            "COPY wheels /tmp/envbuild",
            # pip runs from its own wheel (a debootstrapped base has no pip); --no-index: no network.
            f"RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 /tmp/envbuild/{pip_wheel}/pip install --no-index --no-deps "
            "--disable-pip-version-check --no-cache-dir --root-user-action=ignore --quiet /tmp/envbuild/pkgs/*.whl"
            " && rm -rf /tmp/envbuild",
            "USER 2000:2000",
        ]
    # Native math libraries start a thread per CPU of the host at import: one each, under the
    # sandbox's process limit (and the CPU quota it would not get anyway).
    lines.append("ENV OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMEXPR_MAX_THREADS=1")
    return "\n".join(lines) + "\n"


def _build(client: Client, ctx: Path, digest: str, base_id: str, packages: list[str], modules: list[str]) -> str:
    labels = {
        LABEL_ENV: digest,
        LABEL_BUILT_ON: base_id,
        LABEL_PACKAGES: json.dumps(packages),
        LABEL_MODULES: json.dumps(modules),
    }
    return build_image(
        client,
        path=ctx,
        tag=env_tag(digest),
        labels=labels,
        what="environment image",
    )


def probe_target(backend: EngineBackend, base_id: str) -> dict[str, object]:
    """The sandbox interpreter's version, ABIs and platforms (what `pip download` must fetch for)."""
    cache = cache_dir() / "targets" / f"{base_id.replace(':', '_')}.json"
    if cache.is_file():
        cached: dict[str, object] = json.loads(cache.read_text())
        return cached
    job = SandboxJob(image=base_id, command=["python3", "-I", "-c", _PROBE], limits=Limits(timeout_s=60))
    raw = backend.run(job)
    try:
        target: dict[str, object] = json.loads(raw.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise SandboxUnavailable(f"could not read the sandbox's platform tags (exit {raw.exit_code})") from exc
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(target))
    return target


def download(spec: DependencySpec, target: dict[str, object], dest: Path) -> list[Path]:
    """`pip download` the spec's wheels (dependencies included) for `target` into `dest`."""
    dest.mkdir(parents=True)
    work = dest.parent.parent
    (work / "requirements.in").write_text("\n".join(spec.requirements) + "\n")
    (work / "constraints.txt").write_text("\n".join(sandbox_pins()) + "\n")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        # Wheels only: building an sdist would run the package's code on the host.
        "--only-binary=:all:",
        "--dest",
        str(dest),
        "--python-version",
        str(target["version"]),
        "--implementation",
        "cp",
        "-c",
        str(work / "constraints.txt"),
        "-r",
        str(work / "requirements.in"),
    ]
    for abi in target["abis"]:  # type: ignore[attr-defined]
        cmd += ["--abi", str(abi)]
    for platform in target["platforms"]:  # type: ignore[attr-defined]
        cmd += ["--platform", str(platform)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
    if done.returncode != 0:
        errors = [ln.removeprefix("ERROR: ").strip() for ln in done.stderr.splitlines() if ln.startswith("ERROR:")]
        why = "; ".join(errors[:2]) or done.stderr.strip()[-300:] or "pip download failed"
        raise DependencyError(
            f"the declared dependencies cannot be resolved from the package index (wheels only): {why}"
        )
    return sorted(dest.glob("*.whl"))


def _wheel_name_version(filename: str) -> tuple[str, str]:
    parts = filename[: -len(".whl")].split("-")
    return parts[0], parts[1]


def _pip_wheel() -> Path:
    """A pip wheel for installing inside the build (downloaded once, then cached)."""
    folder = cache_dir() / "pip"
    found = sorted(folder.glob("pip-*.whl")) if folder.is_dir() else []
    if found:
        return found[-1]
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps", "--only-binary=:all:"]
    done = subprocess.run(
        [*cmd, "--dest", str(folder), "pip"],
        capture_output=True,
        text=True,
        timeout=_PIP_TIMEOUT_S,
    )
    found = sorted(folder.glob("pip-*.whl"))
    if done.returncode != 0 or not found:
        raise SandboxUnavailable(f"could not download pip for environment builds: {done.stderr.strip()[-300:]}")
    return found[-1]


def describe(env: Environment) -> str:
    if not env.spec.requirements:
        return "sandbox image (no declared dependencies)"
    state = f"built in {env.build_s:.1f} s" if env.built else "cached"
    return f"{len(env.packages)} packages, {state}"
