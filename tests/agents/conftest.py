"""Agent tests never write to the user's run database: each test gets its own file."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _runs_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs.db"
    monkeypatch.setenv("VERIFIER_RUNS_DB", f"sqlite:///{path}")
    return path
