"""Two builds of the same image at once (two test workers, two commands) take turns, and the
second finds the first's image instead of building it again: a second build would move the tag
to a new image id under a pool that already runs the first, and evidence names the image id."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from verifier.sandbox import image


def test_a_build_that_waited_for_another_finds_its_image(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(image.tempfile, "gettempdir", lambda: str(tmp_path))
    built: list[str] = []
    first_inside = threading.Event()
    release = threading.Event()

    def find(client: Any, base: Any = "auto", *, tag: str | None = None) -> str | None:
        return "sha256:first" if built else None

    def fake_build(client: Any, kind: Any, tag: str, say: Any, **kwargs: Any) -> tuple[str, bool]:
        first_inside.set()
        release.wait(120)
        built.append(tag)
        return tag, True

    monkeypatch.setattr(image, "find_image", find)
    monkeypatch.setattr(image, "_build", fake_build)
    results: list[tuple[str, bool]] = []
    first = threading.Thread(target=lambda: results.append(image.build(None, base="registry")))  # type: ignore[arg-type]
    first.start()
    assert first_inside.wait(120)
    second = threading.Thread(target=lambda: results.append(image.build(None, base="registry")))  # type: ignore[arg-type]
    second.start()
    second.join(0.5)
    assert second.is_alive(), "the second build must wait for the first"
    release.set()
    first.join(120)
    second.join(120)
    assert sorted(results, key=lambda r: r[1]) == [
        (image.image_tag("registry"), False),
        (image.image_tag("registry"), True),
    ]
    assert len(built) == 1
