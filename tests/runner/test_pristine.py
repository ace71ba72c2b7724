"""The trusted server's own check after a job run in it (trusted_process = "shared"): what it puts
back, and that every kind of leftover it promises to see is named. Runs on the host, in-process:
each test changes one thing after the snapshot and undoes it afterwards."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from verifier.runner import pristine


@pytest.fixture
def snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], pristine.Pristine]:
    """Taken in the test itself: pytest's own PYTEST_CURRENT_TEST differs between set-up and call."""
    monkeypatch.setattr(pristine, "TRUSTED_DIR", str(tmp_path))
    monkeypatch.setattr(pristine, "THREADS_GRACE_S", 0.2)
    return pristine.Pristine


def test_a_job_that_changed_nothing_leaves_it_as_it_was(snapshot: Callable[[], pristine.Pristine]) -> None:
    before = snapshot()
    assert before.settle() == []
    assert before.settle() == []


def test_modules_a_job_imported_are_dropped_and_random_is_put_back(snapshot: Callable[[], pristine.Pristine]) -> None:
    before = snapshot()
    assert "this_module_was_imported_by_a_job" not in sys.modules
    sys.modules["this_module_was_imported_by_a_job"] = type(sys)("this_module_was_imported_by_a_job")
    first = random.random()
    random.seed(12345)
    assert before.settle() == []
    assert "this_module_was_imported_by_a_job" not in sys.modules
    assert random.random() == first  # the next job draws what the first one drew


class _Kept:
    attribute = 1


def _set_attr(owner: object, name: str, value: object) -> Callable[[], None]:
    missing = object()
    old = getattr(owner, name, missing)
    setattr(owner, name, value)
    return lambda: delattr(owner, name) if old is missing else setattr(owner, name, old)


def _replace_json() -> Callable[[], None]:
    saved = sys.modules["json"]
    sys.modules["json"] = type(sys)("json")
    return lambda: sys.modules.__setitem__("json", saved)


def _thread() -> Callable[[], None]:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()

    def undo() -> None:
        stop.set()
        thread.join()

    return undo


def _descriptor() -> Callable[[], None]:
    fd = os.open(os.devnull, os.O_RDONLY)
    return lambda: os.close(fd)


def _environment() -> Callable[[], None]:
    os.environ["VERIFIER_LEFT_BEHIND"] = "1"
    return lambda: os.environ.pop("VERIFIER_LEFT_BEHIND")


def _cwd() -> Callable[[], None]:
    old = os.getcwd()
    os.chdir("/")
    return lambda: os.chdir(old)


def _sys_path() -> Callable[[], None]:
    sys.path.append("/left/behind")
    return lambda: sys.path.remove("/left/behind")


def _recursion() -> Callable[[], None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + 1)
    return lambda: sys.setrecursionlimit(old)


def _filters() -> Callable[[], None]:
    old = list(warnings.filters)
    warnings.simplefilter("ignore", ResourceWarning)

    def undo() -> None:
        warnings.filters[:] = old  # type: ignore[index]  # the same list: the module keeps the one it has
        warnings._filters_mutated()  # type: ignore[attr-defined]

    return undo


def _handler() -> Callable[[], None]:
    old = signal.signal(signal.SIGUSR2, lambda *_: None)

    def undo() -> None:
        signal.signal(signal.SIGUSR2, old)

    return undo


def _file(tmp: Path) -> Callable[[], Callable[[], None]]:
    def make() -> Callable[[], None]:
        (tmp / "left.txt").write_text("x")
        return lambda: (tmp / "left.txt").unlink()

    return make


LEFTOVERS: dict[str, tuple[Callable[[], Callable[[], None]], str]] = {
    "a new module attribute": (lambda: _set_attr(json, "left_behind", 1), "module json"),
    "a rebound module attribute": (lambda: _set_attr(json, "dumps", repr), "module json"),
    "a changed class attribute": (lambda: _set_attr(_Kept, "attribute", 2), f"module {__name__}._Kept"),
    "a replaced module": (_replace_json, "module json"),
    "a thread still running": (_thread, "threads"),
    "an open descriptor": (_descriptor, "descriptors"),
    "an environment variable": (_environment, "environment"),
    "another working directory": (_cwd, "working directory"),
    "sys.path": (_sys_path, "sys settings"),
    "the recursion limit": (_recursion, "sys settings"),
    "a warning filter": (_filters, "warning filters"),
    "a signal handler": (_handler, "signal handlers"),
}


@pytest.mark.parametrize("leftover", list(LEFTOVERS))
def test_every_leftover_it_looks_for_is_named(snapshot: Callable[[], pristine.Pristine], leftover: str) -> None:
    make, named = LEFTOVERS[leftover]
    before = snapshot()
    undo = make()
    try:
        assert named in before.settle()
    finally:
        undo()
    assert before.settle() == []


def test_a_file_left_in_the_trusted_directory_is_named(
    snapshot: Callable[[], pristine.Pristine], tmp_path: Path
) -> None:
    before = snapshot()
    undo = _file(tmp_path)()
    try:
        assert "trusted files" in before.settle()
    finally:
        undo()
    (tmp_path / "suite").mkdir()  # the next job's suite is written there: not a leftover
    assert before.settle() == []
