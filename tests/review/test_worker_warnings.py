"""The review worker's own doings never reach a repository's warning filters.

The worker imports Hypothesis before pytest starts (to load the review's profile); pytest then
warns that it cannot rewrite the modules of Hypothesis' plugin. pypa/packaging's configuration has
`filterwarnings = ["error"]`: that warning stopped pytest before it collected anything, and the
review said "pytest never finished collecting" of a tree where plain pytest passes 62,434 tests.
Run here on the host, without Docker: the worker is the same code the image runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WORKER = "import sys; from verifier.runner import review_plugin; review_plugin._worker_main(int(sys.argv[1]))"


def run_worker(tree: Path) -> tuple[list[dict[str, Any]], str]:
    """The worker's report events and console output for one session of `tree`'s tests."""
    job = {
        "work_dir": str(tree),
        "hypothesis": True,
        "args": ["-c", str(tree / "pyproject.toml"), "--confcutdir", str(tree), "tests"],
    }
    r, w = os.pipe()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
        env["PYTHONPATH"] = os.pathsep.join([str(tree), str(ROOT)])
        proc = subprocess.run(
            [sys.executable, "-c", WORKER, str(w)],
            input=json.dumps(job).encode(),
            capture_output=True,
            pass_fds=(w,),
            cwd=tree,
            env=env,
            timeout=300,
        )
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as fh:
        events = [json.loads(line) for line in fh.read().splitlines() if line.strip()]
    return events, proc.stdout.decode(errors="replace")[-2000:]


def test_a_repository_that_makes_warnings_errors_is_collected_and_run(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "pyproject.toml").write_text(
        '[project]\nname = "strict"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\naddopts = ["--strict-config", "-p", "no:logging"]\n'
        'filterwarnings = ["error"]\ntestpaths = ["tests"]\n'
    )
    (tree / "tests" / "test_it.py").write_text(
        "import warnings\n\nimport pytest\n\n\ndef test_ok():\n    assert 1 + 1 == 2\n\n\n"
        "def test_warnings_are_still_errors():\n"
        "    with pytest.raises(UserWarning):\n        warnings.warn('the repository keeps its filter')\n"
    )

    events, console = run_worker(tree)

    kinds = [e.get("ev") for e in events]
    assert "collected" in kinds, console
    assert [e for e in events if e.get("ev") == "done"] == [{"ev": "done", "exit_status": 0}], console
    collected = next(e for e in events if e.get("ev") == "collected")
    assert sorted(i[0] for i in collected["items"]) == [
        "tests/test_it.py::test_ok",
        "tests/test_it.py::test_warnings_are_still_errors",
    ]
