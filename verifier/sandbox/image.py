"""Build and describe the sandbox image, from the recipe in sandbox_images/python/.

The image is tagged and labelled with the digest of its recipe (Dockerfile, pinned
requirements, installer, the in-container runner's code and the base it starts from), so
`build` is a no-op when an image of that digest exists, and a changed recipe gives a new
image. Never pulls unless the base is a registry image and the caller chose it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from verifier.errors import ImageNotFound, SandboxUnavailable
from verifier.hashing import tree_sha256
from verifier.runner.languages import IMAGE_PACKAGES, LANGUAGES
from verifier.sandbox.backend import LanguageImage
from verifier.sandbox.container import Client, inspect_image, remove_image, translated

IMAGE_REPO = "verifier-sandbox"
BASE_REPO = "verifier-base"
#: Language images (programs in C, C++, Java, ...: `language_image`) and their debootstrapped bases.
LANGUAGE_REPO = "verifier-lang"
LANGUAGE_BASE_REPO = "verifier-lang-base"
#: On a language image (and its base): its language packages as "name=version", comma-separated.
LABEL_TOOLCHAIN = "org.verifier.toolchain"
LABEL_RECIPE = "org.verifier.recipe-digest"
#: On an image built FROM a sandbox image (an environment image, sandbox/environment.py): that sandbox image's id. Such
#: an image is superseded with its base, and pruned with it.
LABEL_BUILT_ON = "org.verifier.review.base-image"
REGISTRY_BASE = "python:3.11-slim-bookworm"
DEBIAN_SUITE = "bookworm"
#: python3 for the runner; git for the agent's sandbox (no setuid or capability file comes with
#: it: tests/sandbox/test_image.py holds the image to that).
DEBOOTSTRAP_INCLUDE = ("python3", "git")

Base = Literal["auto", "debootstrap", "registry"]
BaseKind = Literal["debootstrap", "registry"]
#: The lock file (in the temp folder) that makes image builds on this machine take turns.
BUILD_LOCK = "verifier-image-build.lock"
Progress = Callable[[str], None]


#: The recipe's package in an installed distribution: pyproject.toml maps the top-level
#: sandbox_images/ folder to it, so a wheel carries the same files as a checkout.
RECIPE_PACKAGE = "verifier._sandbox_images.python"


def recipe_dir() -> Path:
    """The image recipe: the installed `verifier._sandbox_images.python` package data, or
    `sandbox_images/python/` of the checkout this module runs from. Both hold the same
    files, so the recipe digest (and the image) is the same either way."""
    places: list[Path] = []
    try:
        spec = importlib.util.find_spec(RECIPE_PACKAGE)
    except ImportError:  # a checkout run without installing: no such package
        spec = None
    if spec is not None and spec.submodule_search_locations:
        places += [Path(p) for p in spec.submodule_search_locations]
    places.append(Path(__file__).resolve().parents[2] / "sandbox_images" / "python")
    for place in places:
        if (place / "Dockerfile").is_file():
            return place
    raise SandboxUnavailable(
        "sandbox image recipe not found (looked in " + ", ".join(str(p) for p in places) + "); reinstall verifier"
    )


def runner_dir() -> Path:
    """The in-container runner's code (`verifier/runner/`), copied into the image."""
    return Path(__file__).resolve().parents[1] / "runner"


def _files_under(root: Path, prefix: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            out[f"{prefix}/{path.relative_to(root).as_posix()}"] = path.read_bytes()
    return out


def recipe_files() -> dict[str, bytes]:
    files = _files_under(recipe_dir(), "recipe")
    files.update(_files_under(runner_dir(), "verifier_runner"))
    return files


def resolve_base(base: Base) -> BaseKind:
    if base != "auto":
        return base
    return "debootstrap" if shutil.which("debootstrap") and Path("/etc/apt").is_dir() else "registry"


def base_spec(kind: Literal["debootstrap", "registry"], packages: tuple[str, ...] = ()) -> str:
    """What the base is: a registry image, or a debootstrapped root with these packages (the
    sandbox image's, and `packages` more for a language image)."""
    if kind == "registry":
        return f"registry:{REGISTRY_BASE}"
    return f"debootstrap:{DEBIAN_SUITE}:minbase:{','.join((*DEBOOTSTRAP_INCLUDE, *packages))}"


def _digest_of(spec: str) -> str:
    files = recipe_files()
    files["base"] = spec.encode()
    return tree_sha256(files)


def recipe_digest(base: Base = "auto") -> str:
    return _digest_of(base_spec(resolve_base(base)))


def image_tag(base: Base = "auto") -> str:
    return tag_of(recipe_digest(base))


def tag_of(digest: str) -> str:
    """The sandbox image's tag for a recipe digest."""
    return f"{IMAGE_REPO}:{digest[:16]}"


@dataclass(frozen=True)
class ImageInfo:
    tag: str
    image_id: str
    recipe_digest: str
    base: str
    python: str
    pytest: str
    hypothesis: str
    size_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def find_image(client: Client, base: Base = "auto", *, tag: str | None = None) -> str | None:
    """The id of the built image for the current recipe (its `tag`, when the caller has already
    computed it: the recipe is hashed once a command), or None."""
    meta = inspect_image(client.api, tag or image_tag(base))
    return None if meta is None else str(meta["Id"])


def build(
    client: Client,
    *,
    base: Base = "auto",
    force: bool = False,
    progress: Progress | None = None,
    digest: str | None = None,
) -> tuple[str, bool]:
    """Build the image unless one with this recipe digest exists. Returns (tag, built).
    `digest`: `recipe_digest(base)` when the caller has it (the recipe is hashed once a command)."""
    say = progress or (lambda _msg: None)
    kind = resolve_base(base)
    digest = digest or recipe_digest(kind)
    tag = tag_of(digest)
    if not force and find_image(client, kind, tag=tag) is not None:
        return tag, False  # up to date: an image with this recipe digest exists
    with build_lock():
        # Another process (a second test worker, a second command) may have built it while we
        # waited: building it again would move the tag to a new image id under a running pool,
        # and evidence names the image id.
        if not force and find_image(client, kind, tag=tag) is not None:
            return tag, False
        return _build(client, kind, tag, say, digest=digest)


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    """One image build at a time on this machine (a blocking `flock`, released by the kernel
    if this process dies)."""
    path = Path(tempfile.gettempdir()) / BUILD_LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build(
    client: Client,
    kind: BaseKind,
    tag: str,
    say: Progress,
    *,
    packages: tuple[str, ...] = (),
    repo: str = IMAGE_REPO,
    digest: str | None = None,
) -> tuple[str, bool]:
    """Build the sandbox image's recipe as `tag`; `packages`: Debian packages its debootstrapped
    base adds (a language image, `language_image`), which lands in `repo`."""
    base_image = REGISTRY_BASE if kind == "registry" else _ensure_debootstrap_base(client, say, packages)
    with tempfile.TemporaryDirectory(prefix="verifier-build-") as tmp:
        ctx = Path(tmp)
        for name in ("Dockerfile", "install.py", "requirements.txt"):
            shutil.copy2(recipe_dir() / name, ctx / name)
        shutil.copytree(
            runner_dir(),
            ctx / "verifier_runner",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        _download_wheels(ctx / "wheels", say)
        say(f"building {tag} from {base_image}")
        spec = base_spec(kind, packages)
        labels = {LABEL_RECIPE: digest or _digest_of(spec), "org.verifier.base": spec}
        if packages:
            base_labels = (inspect_image(client.api, base_image) or {}).get("Config", {}).get("Labels") or {}
            labels[LABEL_TOOLCHAIN] = str(base_labels.get(LABEL_TOOLCHAIN, ""))
        build_image(client, path=ctx, tag=tag, buildargs={"BASE": base_image}, labels=labels, say=say)
    if repo != IMAGE_REPO:  # a language image: the sandbox image's own pruning is not for it
        return tag, True
    if os.environ.get("VERIFIER_IMAGE_PRUNE", "1") != "0":
        _prune_superseded(client, keep=tag, say=say, keep_base=base_image)
    return tag, True


def build_image(
    client: Client,
    *,
    path: Path,
    tag: str,
    labels: dict[str, str],
    buildargs: dict[str, str] | None = None,
    what: str = "image",
    say: Progress | None = None,
) -> str:
    """`docker build` of `path` with no network (everything it installs is in the context) and
    no pull; reports progress lines, and raises SandboxUnavailable with the log's tail on failure.
    Returns the image id."""
    log: list[str] = []
    with translated(f"{what} build failed"):
        for chunk in client.api.build(
            path=str(path),
            tag=tag,
            buildargs=buildargs or {},
            labels=labels,
            pull=False,
            rm=True,
            forcerm=True,
            network_mode="none",
            decode=True,
        ):
            if "error" in chunk:
                tail = "\n".join(log[-15:])
                raise SandboxUnavailable(f"{what} build failed: {str(chunk['error']).strip()}\n{tail}")
            line = str(chunk.get("stream", "")).strip()
            if line:
                log.append(line)
            if say is not None and (line.startswith("Step ") or line.startswith("installed ")):
                say(line)
        return str(client.api.inspect_image(tag)["Id"])


def _prune_superseded(
    client: Client,
    *,
    keep: str,
    say: Progress,
    keep_base: str,
    repo: str = IMAGE_REPO,
    base_repo: str = BASE_REPO,
) -> None:
    """Remove the sandbox images of older recipes (`repo` tags other than `keep`), the images
    built on them (environment images) and, when `keep` was built on a base of ours
    (`base_repo`, debootstrapped), that repository's other bases; nothing is left behind.
    Images in use stay.

    While a derived image exists, removing its base only untags the base, and its layers stay
    on disk. So a derived image whose base is superseded or already gone is removed too (the
    engine then deletes the untagged base with it), and so is any untagged sandbox image left.
    Set VERIFIER_IMAGE_PRUNE=0 where several checkouts of verifier share one engine (each
    builds the image of its own recipe and must not remove the others').
    """
    api = client.api
    old = {img["Id"]: [t for t in img.get("RepoTags") or [] if t != keep] for img in api.images(name=repo)}
    old = {image_id: tags for image_id, tags in old.items() if tags}
    present = {img["Id"] for img in api.images(all=True)}
    doomed: list[str] = []
    for img in api.images(filters={"label": LABEL_BUILT_ON}):
        base = (img.get("Labels") or {}).get(LABEL_BUILT_ON)
        if base in old or base not in present:
            doomed += [t for t in img.get("RepoTags") or [] if t != "<none>:<none>"] or [img["Id"]]
    doomed += [tag for tags in old.values() for tag in tags]
    doomed += [img["Id"] for img in api.images(filters={"dangling": True, "label": LABEL_RECIPE})]
    if keep_base.startswith(f"{base_repo}:"):  # a registry base is the registry's, not ours
        doomed += [t for img in api.images(name=base_repo) for t in img.get("RepoTags") or [] if t != keep_base]
    for ref in doomed:
        if remove_image(api, ref):  # else in use by a container, or already gone
            say(f"removed superseded image {ref}")


def _download_wheels(dest: Path, say: Progress) -> None:
    """pip-download the pinned pure-Python wheels on the host (cached across builds)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "verifier" / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    req = recipe_dir() / "requirements.txt"
    wanted = [line.split("#")[0].strip() for line in req.read_text().splitlines() if line.split("#")[0].strip()]
    have = {p.name.lower() for p in cache.glob("*.whl")}

    def present(spec: str) -> bool:
        name, version = spec.split("==")
        stem = f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"
        return any(h.startswith(stem) for h in have)

    if not all(present(s) for s in wanted):
        say("downloading pinned wheels on the host")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            str(cache),
            "-r",
            str(req),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SandboxUnavailable(f"could not download the pinned wheels: {done.stderr.strip()[-500:]}")
    dest.mkdir()
    for spec in wanted:
        name, version = spec.split("==")
        stem = f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"
        match = [p for p in cache.glob("*.whl") if p.name.lower().startswith(stem)]
        if not match:
            raise SandboxUnavailable(f"wheel for {spec} missing after download")
        shutil.copy2(match[0], dest / match[0].name)


def apt_mirror(suite: str = DEBIAN_SUITE) -> str:
    """The Debian mirror this host's apt uses (never a name written into the repository)."""
    sources: list[Path] = []
    for d in (Path("/etc/apt/sources.list.d"), Path("/etc/apt")):
        if d.is_dir():
            sources += sorted(d.glob("*.sources")) + sorted(d.glob("*.list"))
    for path in sources:
        text = path.read_text(errors="replace")
        for stanza in text.split("\n\n"):  # deb822
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uris and suites and suite in suites.group(1).split() and "security" not in uris.group(1):
                return uris.group(1)
        for line in text.splitlines():  # one-line format
            m = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)\s", line.strip() + " ")
            if m and m.group(2) == suite:
                return m.group(1)
    raise SandboxUnavailable(f"no apt source for Debian {suite} found on this host; use --base registry")


def _ensure_debootstrap_base(client: Client, say: Progress, packages: tuple[str, ...] = ()) -> str:
    spec = base_spec("debootstrap", packages)
    repo = LANGUAGE_BASE_REPO if packages else BASE_REPO
    tag = f"{repo}:{hashlib.sha256(spec.encode()).hexdigest()[:16]}"
    if inspect_image(client.api, tag) is not None:
        return tag
    if os.geteuid() != 0:
        raise SandboxUnavailable("building the base with debootstrap needs root; or use --base registry")
    mirror = apt_mirror()
    with tempfile.TemporaryDirectory(prefix="verifier-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        include = (*DEBOOTSTRAP_INCLUDE, *packages)
        say(f"debootstrap {DEBIAN_SUITE} (minbase + {', '.join(include)}) from the host's apt mirror; minutes")
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(include)}",
            DEBIAN_SUITE,
            str(root),
            mirror,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip()[-800:]
            raise SandboxUnavailable(f"debootstrap failed: {tail}")
        toolchain = _package_versions(root, packages) if packages else ""
        for junk in (
            "var/cache/apt/archives",
            "var/lib/apt/lists",
            "usr/share/doc",
            "usr/share/man",
            "usr/share/locale",
            "usr/share/info",
        ):
            shutil.rmtree(root / junk, ignore_errors=True)
        say(f"importing the root file system as {tag}")
        tar_path = Path(tmp) / "rootfs.tar"
        with tarfile.open(tar_path, "w") as tar:
            tar.add(str(root), arcname=".")
        changes = [
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "ENV LANG=C.UTF-8",
        ]
        if toolchain:
            changes.append(f"LABEL {LABEL_TOOLCHAIN}={json.dumps(toolchain)}")
        repo, _, tagname = tag.partition(":")
        with translated("docker import failed"):
            client.api.import_image_from_file(str(tar_path), repository=repo, tag=tagname, changes=changes)
    return tag


def info(client: Client, base: Base = "auto") -> ImageInfo:
    """Describe the built image for the current recipe (runs it once to read versions)."""
    tag = image_tag(base)
    meta = inspect_image(client.api, tag)
    if meta is None:
        raise ImageNotFound(f"sandbox image {tag} is not built; run `verifier image build`")
    probe = (
        "import json, platform, pytest, hypothesis;"
        "print(json.dumps([platform.python_version(), pytest.__version__, hypothesis.__version__]))"
    )
    out = client.containers.run(tag, ["python3", "-I", "-c", probe], remove=True, network_mode="none")
    python, pytest_v, hyp = json.loads(io.BytesIO(out).read().decode().strip().splitlines()[-1])
    labels = meta.get("Config", {}).get("Labels") or {}
    return ImageInfo(
        tag=tag,
        image_id=str(meta["Id"]),
        recipe_digest=str(labels.get(LABEL_RECIPE, "")),
        base=str(labels.get("org.verifier.base", "")),
        python=python,
        pytest=pytest_v,
        hypothesis=hyp,
        size_bytes=int(meta.get("Size", 0)),
    )


def _package_versions(root: Path, packages: tuple[str, ...]) -> str:
    """The installed versions of `packages` in a debootstrapped root, "name=version" comma-separated."""
    cmd = ["dpkg-query", f"--admindir={root / 'var/lib/dpkg'}", "-W", "-f=${Package}=${Version}\\n", *packages]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxUnavailable(f"could not read the versions of {', '.join(packages)}: {done.stderr.strip()[-300:]}")
    return ",".join(sorted(set(done.stdout.split())))


def language_tag() -> str:
    """The tag of the language image: the sandbox image's recipe on a base with every language's
    packages (`languages.IMAGE_PACKAGES`), by the digest of both."""
    return f"{LANGUAGE_REPO}:{_digest_of(base_spec('debootstrap', IMAGE_PACKAGES))[:16]}"


def language_info(client: Client) -> dict[str, Any]:
    """The language image as `verifier image info` describes it: its tag, whether it is built,
    and (built) its id and every language's toolchain (name=version, from its labels)."""
    tag = language_tag()
    meta = inspect_image(client.api, tag)
    if meta is None:
        return {"tag": tag, "built": False}
    labels = meta.get("Config", {}).get("Labels") or {}
    versions = [item for item in str(labels.get(LABEL_TOOLCHAIN, "")).split(",") if item]
    toolchains = {
        name: [v for v in versions if v.partition("=")[0] in lang.packages]
        for name, lang in LANGUAGES.items()
        if lang.packages
    }
    return {"tag": tag, "built": True, "image_id": str(meta["Id"]), "toolchains": toolchains}


def language_image(client: Client, language: str, *, progress: Progress | None = None) -> LanguageImage:
    """The image of programs in `language` (any but Python): the one language image, found by
    its recipe digest or built once like the sandbox image, offline (the packages come in the
    debootstrapped base, from the host's apt mirror). Its toolchain: the versions of the
    language's own packages, from the image's labels."""
    say = progress or (lambda _msg: None)
    tag = language_tag()
    meta = inspect_image(client.api, tag)
    if meta is None:
        if resolve_base("auto") != "debootstrap" or os.geteuid() != 0:
            raise SandboxUnavailable(
                "the language image is built on a debootstrapped base: it needs debootstrap and root"
            )
        with build_lock():
            if inspect_image(client.api, tag) is None:
                _build(client, "debootstrap", tag, say, packages=IMAGE_PACKAGES, repo=LANGUAGE_REPO)
        meta = inspect_image(client.api, tag)
        if meta is None:
            raise SandboxUnavailable(f"the language image {tag} is missing after its build")
    labels = meta.get("Config", {}).get("Labels") or {}
    own = set(LANGUAGES[language].packages)
    toolchain = tuple(item for item in str(labels.get(LABEL_TOOLCHAIN, "")).split(",") if item.partition("=")[0] in own)
    return LanguageImage(language=language, tag=tag, image_id=str(meta["Id"]), toolchain=toolchain)
