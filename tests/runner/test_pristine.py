"""The trusted server's own check after a job run in it (trusted_process = "shared"): what it puts
back, and that every kind of leftover it promises to see is named. Each case runs in a fresh
interpreter (this test process has threads and modules of its own that change while it runs):
take the snapshot, make one change, settle, undo it, settle again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

PRELUDE = """
import json, os, random, signal, sys, threading, warnings
from verifier.runner import pristine
pristine.TRUSTED_DIR = sys.argv[1]
pristine.THREADS_GRACE_S = 0.2
# A uid no other process has: on the host, the sandboxes' own trusted servers (uid 2000) come
# and go, and tests running beside this one (pytest -n) make processes of their own uids.
pristine.TRUSTED_UID = int(sys.argv[2])

class Kept:
    attribute = 1

"""


#: The trusted uid of this test process's probes: one per pytest worker, so that a probe's
#: process of that uid is never seen by a probe of another worker.
PROBE_UID = 3_000_000 + os.getpid()


def _run(tmp_path: Path, body: str, preamble: str = "") -> object:
    """Run `body` after the snapshot `before` (`preamble` before it, at module level), in a
    function: __main__'s own names stay as they were."""
    steps = textwrap.indent("before = pristine.Pristine()\n" + textwrap.dedent(body), "    ")
    script = f"{PRELUDE}{preamble}\ndef scenario():\n    global Kept\n{steps}\n\nscenario()\n"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(PROBE_UID)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_job_that_changed_nothing_leaves_it_as_it_was(tmp_path: Path) -> None:
    assert _run(tmp_path, "print(json.dumps([before.settle(), before.settle()]))") == [[], []]


def test_modules_a_job_imported_are_dropped_and_random_is_put_back(tmp_path: Path) -> None:
    body = """
    import colorsys  # a module the snapshot did not have
    first = random.random()
    random.seed(12345)
    left = before.settle()
    print(json.dumps([left, "colorsys" in sys.modules, random.random() == first]))
    """
    assert _run(tmp_path, body) == [[], False, True]


def test_numpy_s_global_random_state_is_put_back_when_numpy_was_preloaded(tmp_path: Path) -> None:
    # An environment's preload imports numpy before the first job: its global RandomState is then
    # the server's, and a job's seed or draws would reach the next job's tests as they never do
    # in a fork of the server. Put back as `random`'s is.
    body = """
    first = float(numpy.random.rand())
    numpy.random.seed(12345)
    numpy.random.rand(7)
    left = before.settle()
    again = float(numpy.random.rand())
    numpy.random.rand(3)
    print(json.dumps([left, again == first, before.settle(), float(numpy.random.rand()) == first]))
    """
    assert _run(tmp_path, body, preamble="import numpy\n") == [[], True, [], True]


def test_numpy_is_never_imported_by_the_snapshot(tmp_path: Path) -> None:
    body = """
    print(json.dumps([before.numpy_random is None, "numpy" in sys.modules]))
    """
    assert _run(tmp_path, body) == [True, False]


def test_a_submodule_a_job_imported_is_unbound_from_its_package(tmp_path: Path) -> None:
    # `import json.tool` binds `tool` on the package `json` (which the snapshot had): the package
    # is as it was after settle, and the next job imports the submodule afresh.
    body = """
    assert "json.tool" not in sys.modules and not hasattr(json, "tool")
    __import__("json.tool")
    left = before.settle()
    print(json.dumps([left, "json.tool" in sys.modules, hasattr(json, "tool")]))
    """
    assert _run(tmp_path, body) == [[], False, False]


def test_a_package_attribute_rebound_after_the_import_is_named(tmp_path: Path) -> None:
    # The binding is removed only while it is still the module the job imported.
    body = """
    __import__("json.tool")
    json.tool = "something else"
    print(json.dumps(before.settle()))
    """
    assert "module json" in _run(tmp_path, body)  # type: ignore[operator]


#: (what a job does, how the test undoes it, the name settle gives it)
LEFTOVERS = {
    "a new module attribute": ("json.left_behind = 1", "del json.left_behind", "module json"),
    "a rebound module attribute": ("saved = json.dumps; json.dumps = repr", "json.dumps = saved", "module json"),
    "a changed class attribute": ("Kept.attribute = 2", "Kept.attribute = 1", "module __main__.Kept"),
    "a replaced module": (
        "saved = sys.modules['json']; sys.modules['json'] = type(sys)('json')",
        "sys.modules['json'] = saved",
        "module json",
    ),
    "a thread still running": (
        "stop = threading.Event(); t = threading.Thread(target=stop.wait); t.start()",
        "stop.set(); t.join()",
        "threads",
    ),
    "an open descriptor": ("fd = os.open(os.devnull, os.O_RDONLY)", "os.close(fd)", "descriptors"),
    "an environment variable": ("os.environ['LEFT'] = '1'", "del os.environ['LEFT']", "environment"),
    "another working directory": ("old = os.getcwd(); os.chdir('/')", "os.chdir(old)", "working directory"),
    "sys.path": ("sys.path.append('/left')", "sys.path.remove('/left')", "sys settings"),
    "the recursion limit": (
        "old = sys.getrecursionlimit(); sys.setrecursionlimit(old + 1)",
        "sys.setrecursionlimit(old)",
        "sys settings",
    ),
    "a warning filter": (
        "old = list(warnings.filters); warnings.simplefilter('ignore', ResourceWarning)",
        "warnings.filters[:] = old; warnings._filters_mutated()",
        "warning filters",
    ),
    "a signal handler": (
        "old = signal.signal(signal.SIGUSR2, lambda *_: None)",
        "signal.signal(signal.SIGUSR2, old)",
        "signal handlers",
    ),
    "a process of the trusted user": (
        "r, w = os.pipe()\npid = os.fork()\n"
        "if pid == 0:\n    os.setuid(pristine.TRUSTED_UID); os.close(w); os.read(r, 1); os._exit(0)\n"
        "import time; time.sleep(0.2)",
        "os.close(w); os.close(r); os.waitpid(pid, 0)",
        "processes",
    ),
    "the collector's frozen objects": ("import gc; gc.freeze()", "gc.unfreeze()", "collector"),
    "a file in the trusted directory": (
        "open(os.path.join(sys.argv[1], 'left.txt'), 'w').close()",
        "os.remove(os.path.join(sys.argv[1], 'left.txt'))",
        "trusted files",
    ),
}


@pytest.mark.parametrize("leftover", list(LEFTOVERS))
def test_every_leftover_it_looks_for_is_named(tmp_path: Path, leftover: str) -> None:
    if leftover == "a process of the trusted user" and os.geteuid() != 0:
        pytest.skip("needs root to start a process under another uid")
    change, undo, named = LEFTOVERS[leftover]
    first, second = _run(
        tmp_path, f"{change}\nfirst = before.settle()\n{undo}\nprint(json.dumps([first, before.settle()]))"
    )  # type: ignore[misc]
    assert named in first
    assert second == []


def test_the_next_jobs_suite_folder_is_not_a_leftover(tmp_path: Path) -> None:
    assert _run(tmp_path, "os.mkdir(os.path.join(sys.argv[1], 'suite'))\nprint(json.dumps(before.settle()))") == []


#: What numpy and pandas keep for the process besides their attributes (preloaded by an
#: environment, so in the server before the first job): (what a job does, how the test undoes it).
LIBRARY_LEFTOVERS = {
    "numpy print options": (
        "old = numpy.get_printoptions(); numpy.set_printoptions(precision=2)",
        "numpy.set_printoptions(**old)",
    ),
    "numpy error handling": ("old = numpy.seterr(all='raise')", "numpy.seterr(**old)"),
    "numpy's error callback": ("numpy.seterrcall(print)", "numpy.seterrcall(None)"),
    "numpy's buffer size": ("numpy.setbufsize(16384)", "numpy.setbufsize(8192)"),
    "a pandas option": ("pandas.set_option('display.precision', 2)", "pandas.reset_option('display.precision')"),
}


@pytest.mark.parametrize("leftover", list(LIBRARY_LEFTOVERS))
def test_settings_of_preloaded_numpy_and_pandas_are_named(tmp_path: Path, leftover: str) -> None:
    change, undo = LIBRARY_LEFTOVERS[leftover]
    first, second = _run(
        tmp_path,
        f"{change}\nfirst = before.settle()\n{undo}\nprint(json.dumps([first, before.settle()]))",
        preamble="import numpy, pandas\n",
    )  # type: ignore[misc]
    assert "numpy and pandas settings" in first
    assert second == []
