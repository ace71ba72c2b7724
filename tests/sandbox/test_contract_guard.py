"""The guard of the backend contract (tests/sandbox/test_contract.py): every SandboxBackend in
`verifier/` is one the contract tests run. It reads classes only, so it runs without Docker too
(no `docker` mark: VERIFIER_SKIP_DOCKER=1 does not skip it)."""

from __future__ import annotations

from pathlib import Path

from tests.sandbox.test_contract import BACKEND_TYPES, CONTRACT_ELSEWHERE, TEST_DOUBLES
from verifier.sandbox.backend import SandboxBackend


def test_every_backend_keeps_the_contract() -> None:
    """Every SandboxBackend subclass in `verifier/` is in BACKENDS or collects these tests elsewhere."""
    import importlib
    import pkgutil

    import verifier

    for info in pkgutil.walk_packages(verifier.__path__, "verifier."):
        # The runner is the in-container side (it never holds a host backend); __main__ runs the CLI.
        if not info.name.startswith("verifier.runner") and info.name != "verifier.__main__":
            importlib.import_module(info.name)
    seen: set[str] = set()
    pending = list(SandboxBackend.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__module__.split(".")[0] == "verifier":  # test doubles of other test modules are not ours
            seen.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    missing = seen - {cls.__name__ for cls in BACKEND_TYPES.values()} - set(CONTRACT_ELSEWHERE) - TEST_DOUBLES
    assert missing == set(), f"backends that no contract test runs: {sorted(missing)}"
    for path in CONTRACT_ELSEWHERE.values():
        assert (Path(__file__).parents[2] / path).is_file(), path
