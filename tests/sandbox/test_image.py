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
