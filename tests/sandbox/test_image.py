from __future__ import annotations

from pathlib import Path

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
