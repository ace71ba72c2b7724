"""The garbage collector as plain pytest's process has it, on both sides of the sandbox: what the
trusted server and the zygote imported before they forked stays visible to `gc.get_referrers`
and collectable (a finalizer of it fires), for the candidate's code and for the tests, on the
plain image and on an environment that preloads numpy and pandas. The one thing changed is that
pytest does not collect once more after the session (`pytest_plugin.skip_final_collection`): it
would walk the whole inherited heap for warnings no verdict reads."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from _pytest.unraisableexception import gc_collect_iterations_key

from verifier import Candidate, Verifier
from verifier.runner.pytest_plugin import skip_final_collection

CANDIDATE = Candidate.from_text(
    "import gc, importlib, os, weakref\n\n\n"
    "def owners_of_join():\n"
    "    found = gc.get_referrers(os.path.join)\n"
    "    return sorted(r['__name__'] for r in found if type(r) is dict and '__name__' in r)\n\n\n"
    "def collected_after_reload(name, attribute):\n"
    "    module = importlib.import_module(name)\n"
    "    fired = []\n"
    "    weakref.finalize(getattr(module, attribute), fired.append, 1)\n"
    "    importlib.reload(module)\n"
    "    gc.collect()\n"
    "    return bool(fired)\n"
)
TESTS = (
    "import gc, os\nfrom solution import collected_after_reload, owners_of_join\n\n\n"
    "def test_the_candidate_sees_what_was_imported_before_its_process():\n"
    "    assert 'posixpath' in owners_of_join()\n\n\n"
    "def test_the_tests_see_it_too():\n"
    "    assert any(type(r) is dict and r.get('__name__') == 'posixpath' for r in gc.get_referrers(os.path.join))\n\n\n"
    "def test_an_inherited_class_made_garbage_is_collected():\n"
    "    assert collected_after_reload('textwrap', 'TextWrapper')\n"
)


def test_pytest_is_told_to_skip_its_final_collection() -> None:
    config = SimpleNamespace(stash=pytest.Stash())
    skip_final_collection(config)  # type: ignore[arg-type]
    assert config.stash[gc_collect_iterations_key] == 0


def _suite(root: Path, manifest: str) -> Path:
    suite = root / "suite"
    suite.mkdir()
    (suite / "suite.toml").write_text(manifest)
    (suite / "test_gc.py").write_text(TESTS)
    return suite


@pytest.mark.docker
def test_a_plain_suite(verifier: Verifier, tmp_path: Path) -> None:
    ev = verifier.check(CANDIDATE, _suite(tmp_path, ""))
    assert ev.ok and ev.counts.passed == 3, (ev.reason, [(f.test_id, f.message) for f in ev.failures])


@pytest.mark.docker
@pytest.mark.slow
def test_an_environment_whose_packages_are_preloaded(verifier: Verifier, tmp_path: Path) -> None:
    # examples/dataframes' requirement lines: the same environment image, nothing more to build.
    ev = verifier.check(CANDIDATE, _suite(tmp_path, 'requirements = ["numpy>=2,<3", "pandas==2.*"]\n'))
    assert ev.ok and ev.counts.passed == 3, (ev.reason, [(f.test_id, f.message) for f in ev.failures])
    assert ev.environment is not None
