"""A `verifier` command starts from compiled modules, wherever Python may not write bytecode.

`scripts/env.sh` installs with `pip --no-compile` and compiles the venv itself: with
PYTHONDONTWRITEBYTECODE set (this machine, many CI runners and images), Python never writes
what it compiles, so a venv that relied on "compiled on first use" compiled the CLI's imports
again at every start (0.3-0.7 s of each command; docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Run with bytecode writes off, as on this machine: whatever is found compiled was compiled before.
PROBE = """
import importlib.util, json, os, sys
# What a `bench humaneval` run imports: the CLI, then (on first use) the engine's SDK and the rest.
import verifier.cli, verifier.cli.bench_humaneval, verifier.bench.humaneval, verifier.batch
import verifier.sandbox.docker_engine, verifier.sandbox.container, verifier.verify, verifier.evidence
roots = tuple(sys.argv[1:])
missing = []
for module in list(sys.modules.values()):
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    if not origin or not origin.endswith(".py") or not origin.startswith(roots):
        continue
    cached = importlib.util.cache_from_source(origin)
    if not os.path.exists(cached) or os.path.getmtime(cached) < os.path.getmtime(origin):
        missing.append(origin)
print(json.dumps(missing))
"""


@pytest.mark.skipif(not (Path(sys.prefix) / ".verifier-installed").exists(), reason="not the venv scripts/env.sh makes")
def test_the_cli_finds_every_module_it_imports_compiled() -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run(
        # The venv only: the project's own modules are compiled by env.sh when they changed, and
        # a file edited since (a developer running pytest directly) is no fault of the set-up.
        [sys.executable, "-c", PROBE, sys.prefix],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=ROOT,
    )
    missing = json.loads(done.stdout)
    assert missing == [], f"{len(missing)} modules compiled at every start, e.g. {missing[:5]}"
