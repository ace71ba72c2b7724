"""`verifier check` makes each trip once (issue 33): the suite folder read once, the engine
connected once, the image recipe hashed once. Spies count the real calls; the check itself runs
on the real engine and must still pass."""

from __future__ import annotations

from collections import Counter
from typing import Any

import docker
import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE, SUITE
from verifier.cli import app
from verifier.sandbox import image
from verifier.suite import Suite


def test_check_reads_connects_and_hashes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    trips: Counter[str] = Counter()

    def spy(name: str, real: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            trips[name] += 1
            return real(*args, **kwargs)

        return counted

    monkeypatch.setattr(Suite, "__init__", spy("suite read", Suite.__init__))
    monkeypatch.setattr(docker.DockerClient, "__init__", spy("engine connection", docker.DockerClient.__init__))
    monkeypatch.setattr(image, "recipe_digest", spy("recipe hashed", image.recipe_digest))
    done = CliRunner().invoke(app, ["check", str(EXAMPLE / "good.py"), "--suite", str(SUITE), "--json"])
    assert done.exit_code == 0, done.stdout
    assert trips == {"suite read": 1, "engine connection": 1, "recipe hashed": 1}, dict(trips)


def test_a_first_run_that_builds_the_image_hashes_the_recipe_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build path takes the digest the command already has (the build itself is stubbed:
    what is counted is the command's own trips)."""
    from verifier.cli.common import ensure_image

    hashed: list[str] = []
    real = image.recipe_digest

    def counted(*args: Any, **kwargs: Any) -> str:
        hashed.append("recipe")
        return real(*args, **kwargs)

    built: list[str] = []

    def fake_build(client: Any, kind: Any, tag: str, say: Any, **kwargs: Any) -> tuple[str, bool]:
        built.append(tag)
        assert kwargs.get("digest") and tag == image.tag_of(kwargs["digest"])
        return tag, True

    monkeypatch.setattr(image, "recipe_digest", counted)
    monkeypatch.setattr(image, "find_image", lambda *a, **k: None)  # as on a first run
    monkeypatch.setattr(image, "_build", fake_build)
    tag = ensure_image(say=lambda _m: None)
    assert built == [tag] and hashed == ["recipe"], (built, hashed)
