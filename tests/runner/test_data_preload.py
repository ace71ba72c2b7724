"""The environment's packages preloaded before fork (issue 37 §2): which ones a job asks for,
the zygote's refusal of anything else, and (real containers) that the verdicts with the preload
are those without it, failing test for failing test, on the dataframe example's candidates."""

from __future__ import annotations

from pathlib import Path

import pytest

import verifier.verify as verify_module
from verifier import Limits, PoolConfig, Verifier
from verifier.runner import zygote
from verifier.runner.protocol import PRELOADABLE, data_preload, is_launch_command, launch_command, launch_data

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dataframes"


def test_a_test_suite_preloads_the_allowed_packages_its_environment_has() -> None:
    assert PRELOADABLE == ("numpy", "pandas")
    assert data_preload(("dateutil", "numpy", "pandas", "pytz", "tzdata"), "tests") == "numpy,pandas"
    assert data_preload(("numpy", "scipy"), "tests") == "numpy"
    assert data_preload(("requests", "attrs"), "tests") == ""
    # A program's case is judged on its process's peak memory: inherited pages would count.
    assert data_preload(("numpy", "pandas"), "program") == ""


def test_the_launch_command_carries_the_preload_and_stays_a_launch_command() -> None:
    command = launch_command(5, "", "numpy,pandas")
    assert is_launch_command(command) and launch_data(command) == "numpy,pandas"
    assert launch_data(launch_command(5)) == "" and "--data" not in launch_command(5)


def test_the_zygote_preloads_nothing_off_the_list() -> None:
    with pytest.raises(zygote.PreloadFailed, match="'os'"):
        zygote.preload_data("os")
    assert zygote.preload_data("") == []


@pytest.mark.docker
@pytest.mark.slow
def test_verdicts_with_the_preload_are_those_without_it(sandbox_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    candidates = [EXAMPLE / "good.py", *sorted((EXAMPLE / "wrong").glob("*.py"))]
    config = PoolConfig(policy="reuse", size=1, max_uses=100)
    verdicts: dict[bool, list[tuple[str, list[str], int]]] = {}
    with Verifier.pooled(config, image=sandbox_image, limits=Limits(timeout_s=300)) as v:
        for preload in (True, False):
            if not preload:
                monkeypatch.setattr(verify_module, "data_preload", lambda _modules, _kind: "")
            verdicts[preload] = []
            for candidate in candidates:
                ev = v.check(candidate, EXAMPLE / "suite")
                failing = sorted(f.test_id for f in ev.failures)
                verdicts[preload].append((ev.status.value, failing, ev.counts.passed))
    assert verdicts[True] == verdicts[False]
    assert verdicts[True][0] == ("passed", [], 4)
    assert all(status == "failed" and failing for status, failing, _ in verdicts[True][1:])
