"""A suite: a folder of ordinary pytest files that `import solution`, plus an optional
`suite.toml`. Loaded once into memory; the host's files are only ever read."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.errors import InvalidInput
from verifier.hashing import tree_sha256

MAX_SUITE_BYTES = 8 * 1024**2
MANIFEST = "suite.toml"
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", ".git"}


@dataclass(frozen=True)
class Suite:
    """The trusted tests, as bytes, with their manifest's settings."""

    files: dict[str, bytes]
    module: str = "solution"
    limits: dict[str, Any] = field(default_factory=dict)
    max_examples: int = 100
    name: str = "suite"
    #: "pytest" (default) or "direct": call plain `test_*` functions without pytest start-up cost.
    runner: str = "pytest"

    @property
    def uses_hypothesis(self) -> bool:
        return any(b"hypothesis" in data for path, data in self.files.items() if path.endswith(".py"))

    @property
    def sha256(self) -> str:
        return tree_sha256(self.files)

    @property
    def test_files(self) -> list[str]:
        return [p for p in self.files if _is_test_file(p)]


def _is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def load_suite(path: Path | str) -> Suite:
    """Read a suite folder. Raises InvalidInput with a one-line reason when unusable."""
    root = Path(path)
    if not root.exists():
        raise InvalidInput(f"suite folder {root} does not exist")
    if not root.is_dir():
        raise InvalidInput(f"suite {root} is not a folder")
    files: dict[str, bytes] = {}
    total = 0
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or p.suffix == ".pyc" or not p.is_file():
            continue
        data = p.read_bytes()
        total += len(data)
        if total > MAX_SUITE_BYTES:
            raise InvalidInput(f"suite {root} is larger than {MAX_SUITE_BYTES // 1024**2} MiB")
        files[rel.as_posix()] = data
    manifest: dict[str, Any] = {}
    if MANIFEST in files:
        try:
            manifest = tomllib.loads(files[MANIFEST].decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"{root / MANIFEST} is not valid TOML: {exc}") from exc
    suite = Suite(
        files=files,
        module=str(manifest.get("module", "solution")),
        limits=dict(manifest.get("limits", {})),
        max_examples=int(manifest.get("hypothesis", {}).get("max_examples", 100)),
        name=str(manifest.get("name", root.resolve().name)),
        runner=str(manifest.get("runner", "pytest")),
    )
    if suite.runner not in ("pytest", "direct"):
        raise InvalidInput(f"{MANIFEST}: runner must be 'pytest' or 'direct', not {suite.runner!r}")
    if not suite.module.isidentifier():
        raise InvalidInput(f"{MANIFEST}: module {suite.module!r} is not a Python identifier")
    if not any(files[p].strip() for p in suite.test_files):
        raise InvalidInput(f"suite {root} has no tests (no non-empty test_*.py or *_test.py file)")
    return suite
