"""The zygote and the trusted server freeze their heap once it is imported, before they fork
(`reaper.freeze_heap`): a candidate process and a job's trusted child start with the inherited
objects in the collector's permanent generation, so their collections never walk (and copy) the
inherited pages. Its speed is measured in bench/ (docs/performance.md); this keeps it in place,
on the plain image and on an environment image whose zygote preloaded numpy and pandas."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier import Candidate, Verifier

pytestmark = pytest.mark.docker

CANDIDATE = Candidate.from_text("import gc\n\n\ndef frozen():\n    return gc.get_freeze_count()\n")
TEST = (
    "import gc\nfrom solution import frozen\n\n\n"
    "def test_both_sides_start_from_a_frozen_heap():\n"
    "    assert gc.get_freeze_count() > 1000  # this job's trusted child, forked from the server\n"
    "    assert frozen() > 1000  # the candidate process, forked from the zygote\n"
)


def _suite(root: Path, manifest: str) -> Path:
    suite = root / "suite"
    suite.mkdir()
    (suite / "suite.toml").write_text(manifest)
    (suite / "test_frozen.py").write_text(TEST)
    return suite


def test_a_plain_suite(verifier: Verifier, tmp_path: Path) -> None:
    ev = verifier.check(CANDIDATE, _suite(tmp_path, ""))
    assert ev.ok, (ev.reason, [f.message for f in ev.failures])


@pytest.mark.slow
def test_an_environment_whose_packages_are_preloaded(verifier: Verifier, tmp_path: Path) -> None:
    # examples/dataframes' requirement lines: the same environment image, nothing more to build.
    ev = verifier.check(CANDIDATE, _suite(tmp_path, 'requirements = ["numpy>=2,<3", "pandas==2.*"]\n'))
    assert ev.ok, (ev.reason, [f.message for f in ev.failures])
    assert ev.environment is not None
