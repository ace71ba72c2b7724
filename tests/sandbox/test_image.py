from __future__ import annotations

from pathlib import Path

import docker.errors
import pytest

from verifier.sandbox import image


def test_digest_is_stable_and_covers_recipe_and_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    digest = image.recipe_digest("debootstrap")
    assert digest == image.recipe_digest("debootstrap")
    assert digest != image.recipe_digest("registry")  # the base is part of the recipe
    files = image.recipe_files()
    assert "recipe/Dockerfile" in files and "verifier_runner/trusted.py" in files

    changed = dict(files)
    changed["recipe/requirements.txt"] += b"\n# changed\n"
    monkeypatch.setattr(image, "recipe_files", lambda: changed)
    assert image.recipe_digest("debootstrap") != digest


def test_apt_mirror_is_read_from_host_sources() -> None:
    if not Path("/etc/apt").is_dir():
        pytest.skip("not a Debian host")
    assert image.apt_mirror().startswith(("http://", "https://", "file:"))


@pytest.mark.docker
def test_built_image_carries_its_recipe_digest(docker_client: object, sandbox_image: str) -> None:
    labels = docker_client.api.inspect_image(sandbox_image)["Config"]["Labels"]  # type: ignore[attr-defined]
    assert labels[image.LABEL_RECIPE] == image.recipe_digest()


def _derive(client: object, base: str, tag: str, labels: dict[str, str], tmp_path: Path) -> str:
    """An image FROM `base` with `labels` (metadata only: no layer is built)."""
    ctx = tmp_path / tag.replace(":", "-")
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {base}\n")
    return image.build_image(client, path=ctx, tag=tag, labels=labels)  # type: ignore[arg-type]


@pytest.mark.docker
def test_prune_removes_superseded_images_and_what_was_built_on_them(
    docker_client: object, sandbox_image: str, tmp_path: Path
) -> None:
    """An older recipe's image and a review environment built on it are both removed (while the
    environment exists, the base is only untagged and its layers stay), and so is an older base
    of ours; the current image, its base and an environment built on it stay."""
    api = docker_client.api  # type: ignore[attr-defined]
    repo, env_repo, base_repo = "verifier-prune-test", "verifier-prune-test-env", "verifier-prune-test-base"
    base_id = _derive(docker_client, sandbox_image, f"{base_repo}:current", {"t": "base"}, tmp_path)
    old_base_id = _derive(docker_client, sandbox_image, f"{base_repo}:old", {"t": "old base"}, tmp_path)
    current_id = _derive(docker_client, f"{base_repo}:current", f"{repo}:current", {"t": "current"}, tmp_path)
    old_id = _derive(docker_client, f"{base_repo}:old", f"{repo}:old", {"t": "old"}, tmp_path)
    on_old = _derive(docker_client, f"{repo}:old", f"{env_repo}:on-old", {image.LABEL_BUILT_ON: old_id}, tmp_path)
    on_current = _derive(
        docker_client, f"{repo}:current", f"{env_repo}:on-current", {image.LABEL_BUILT_ON: current_id}, tmp_path
    )
    said: list[str] = []
    try:
        image._prune_superseded(
            docker_client,  # type: ignore[arg-type]
            keep=f"{repo}:current",
            say=said.append,
            keep_base=f"{base_repo}:current",
            repo=repo,
            base_repo=base_repo,
        )
        present = {img["Id"] for img in api.images(all=True)}
        assert not {old_id, on_old, old_base_id} & present  # gone, not merely untagged
        assert {base_id, current_id, on_current} <= present
        assert f"removed superseded image {repo}:old" in said
    finally:
        made = [f"{env_repo}:on-current", f"{env_repo}:on-old"]
        made += [f"{name}:{which}" for name in (repo, base_repo) for which in ("old", "current")]
        for ref in made:
            try:
                api.remove_image(ref)
            except docker.errors.APIError:  # already removed by the prune
                pass


#: Setuid and setgid programs of Debian's own base (login, passwd, mount, util-linux): inert in
#: a sandbox (no-new-privileges), and no tool the image adds (git, its perl and libraries) may
#: add one.
BASE_SETUID = {
    "/usr/sbin/unix_chkpwd",
    "/usr/bin/gpasswd",
    "/usr/bin/expiry",
    "/usr/bin/newgrp",
    "/usr/bin/chage",
    "/usr/bin/chfn",
    "/usr/bin/umount",
    "/usr/bin/mount",
    "/usr/bin/passwd",
    "/usr/bin/chsh",
    "/usr/bin/su",
}
_PRIVILEGED_FILES = """
import os, stat
found = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
            found.append("setid " + path)
        try:
            os.getxattr(path, "security.capability", follow_symlinks=False)
            found.append("caps " + path)
        except OSError:
            pass
print("\\n".join(sorted(found)))
"""


@pytest.mark.docker
def test_the_image_adds_no_privileged_file_to_debians_base(docker_client: object, sandbox_image: str) -> None:
    """What the image adds for the agent (git, a `python` link, names for the sandbox's users)
    changes nothing a candidate can reach: no new setuid/setgid program, no file capability."""
    out = docker_client.containers.run(  # type: ignore[attr-defined]
        sandbox_image, ["python3", "-I", "-c", _PRIVILEGED_FILES], user="0:0", network_mode="none", remove=True
    )
    found = set(out.decode().split("\n")) - {""}
    assert not {line for line in found if line.startswith("caps ")}, found
    assert {line.removeprefix("setid ") for line in found} <= BASE_SETUID, found
