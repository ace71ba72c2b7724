"""Hostile candidate folders (issue 21, items 2 and 3), end to end through real sandboxes.

Item 2: a folder that ships a module named like the suite's own reference (`helpers`) used to
replace it for the tests: both sides of `assert f(x) == reference(x)` were the candidate's, and
the evidence said passed. Only the modules a suite declares are the tests' to import now, and a
folder that takes a name of the suite's, the standard library's or the image's is refused on the
host (invalid_input, with the candidate's digest). Item 3: a tree whose digest and deployed files
could differ (two spellings of one file, case or Unicode aliases, a module defined twice) is
refused before it is hashed; and a tree's own files never make a set-up fail in the sandbox (our
infra_error). Each attacker below has a one-line note of its technique.
"""

from __future__ import annotations

import dataclasses
import io
import secrets
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from tests.conftest import QUICK_SUITE
from verifier import Candidate, Limits, Status, Verifier
from verifier.errors import InvalidInput
from verifier.runner import trees
from verifier.runner.protocol import IMAGE_MODULES, encode_job, read_job
from verifier.suite import load_suite
from verifier.verdict import judge_result, read_result

pytestmark = [pytest.mark.docker, pytest.mark.slow]

GOOD = (
    "def find_duplicates(items):\n"
    "    seen, out = [], []\n"
    "    for item in items:\n"
    "        if item in seen:\n"
    "            if item not in out:\n"
    "                out.append(item)\n"
    "        else:\n"
    "            seen.append(item)\n"
    "    return out\n"
)
WRONG = "def find_duplicates(items):\n    return []\n"
#: A reference that agrees with WRONG: what a forger puts where the suite's reference was.
FORGED_REFERENCE = "def reference(items):\n    return []\n"
CASES = "CASES = [[1, 2, 1], [3, 3, 3, 1], ['a', 'b', 'a', 'b']]\n"

#: Suites whose tests compare the candidate with a reference that lives in the suite folder, in
#: each way a suite can hold one.
SUITES: dict[str, dict[str, str]] = {
    # the reproducer: a module of the suite
    "module": {
        "helpers.py": GOOD.replace("find_duplicates", "reference"),
        "test_dups.py": "from helpers import reference\nfrom solution import find_duplicates\n" + CASES + (
            "\n\ndef test_matches_reference():\n    for items in CASES:\n"
            "        assert find_duplicates(list(items)) == reference(list(items))\n"
        ),
    },
    # a namespace package of the suite (a folder without __init__.py)
    "namespace": {
        "refs/dups.py": GOOD.replace("find_duplicates", "reference"),
        "test_dups.py": "from refs.dups import reference\nfrom solution import find_duplicates\n" + CASES + (
            "\n\ndef test_matches_reference():\n    for items in CASES:\n"
            "        assert find_duplicates(list(items)) == reference(list(items))\n"
        ),
    },
    # a plugin the suite's conftest names in pytest_plugins
    "plugin": {
        "conftest.py": "pytest_plugins = ['refplugin']\n",
        "refplugin.py": "import pytest\n\n" + GOOD.replace("find_duplicates", "_reference") + (
            "\n\n@pytest.fixture\ndef reference():\n    return _reference\n"
        ),
        "test_dups.py": "from solution import find_duplicates\n" + CASES + (
            "\n\ndef test_matches_reference(reference):\n    for items in CASES:\n"
            "        assert find_duplicates(list(items)) == reference(list(items))\n"
        ),
    },
    # a faster reference the suite uses when it is installed, its own otherwise
    "optional": {
        "test_dups.py": "try:\n    import fastref\nexcept ImportError:\n    fastref = None\n"
        "from solution import find_duplicates\n" + CASES + GOOD.replace("find_duplicates", "_reference") + (
            "\n\ndef test_matches_reference():\n"
            "    reference = fastref.reference if fastref is not None else _reference\n"
            "    for items in CASES:\n"
            "        assert find_duplicates(list(items)) == reference(list(items))\n"
        ),
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, files in SUITES.items():
        root = tmp_path_factory.mktemp(f"suite-{name}")
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        made[name] = root
    return made


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    """The candidate as a folder on disk, the way `verifier check DIR` reads it."""
    root = tmp_path / "candidate"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("kind", sorted(SUITES))
def test_the_wrong_solution_alone_fails_every_reference_suite(
    verifier: Verifier, suites: dict[str, Path], kind: str
) -> None:
    ev = verifier.check(Candidate.from_text(WRONG), suites[kind])
    assert ev.status is Status.FAILED, (ev.status, ev.reason)
    assert verifier.check(Candidate.from_text(GOOD), suites[kind]).ok


FORGED_PLUGIN = "import pytest\n\n\n@pytest.fixture\ndef reference():\n    return lambda items: []\n"
#: (suite, the forger's extra files, the module its refusal names): a forged reference for each.
FORGERIES = [
    # the reproducer: ship helpers.py, the suite's reference module
    ("module", {"helpers.py": FORGED_REFERENCE}, "helpers"),
    # the same name as a package
    ("module", {"helpers/__init__.py": FORGED_REFERENCE}, "helpers"),
    # a namespace folder without __init__.py, which the import system would merge with the suite's
    ("namespace", {"refs/dups.py": FORGED_REFERENCE}, "refs"),
    # the suite's pytest_plugins entry
    ("plugin", {"refplugin.py": FORGED_PLUGIN}, "refplugin"),
    # a module the suite imports only when it is there
    ("optional", {"fastref.py": FORGED_REFERENCE}, "fastref"),
    # a case-only variant of the suite's module, for a case-insensitive lookup
    ("module", {"Helpers.py": FORGED_REFERENCE}, "helpers"),
    # a conftest.py beside the candidate, pytest's own name
    ("module", {"conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef x():\n    pass\n"}, "conftest"),
    # hypothesis, the package the tests use, replaced by the candidate's
    ("module", {"hypothesis/__init__.py": "def given(*a, **k):\n    return lambda f: lambda: None\n"}, "hypothesis"),
    # the suite's own test file name, with a test that always passes
    ("module", {"test_dups.py": "def test_matches_reference():\n    pass\n"}, "test_dups"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "extra", "module"), FORGERIES, ids=[f"{k}-{'+'.join(extra)}" for k, extra, _ in FORGERIES]
)
def test_a_folder_cannot_replace_a_module_of_the_suite_or_the_sandbox(
    verifier: Verifier, suites: dict[str, Path], tmp_path: Path, kind: str, extra: dict[str, str], module: str
) -> None:
    folder = _folder(tmp_path, {"solution.py": WRONG, **extra})
    ev = verifier.check(folder, suites[kind])
    assert not ev.ok
    assert ev.status is Status.INVALID_INPUT, (ev.status, ev.reason)
    assert ev.candidate_sha256 == Candidate.from_path(folder).sha256  # the refused tree, named
    assert f"'{module}'" in ev.reason and "\n" not in ev.reason
    assert any(name in ev.failures[0].detail_untrusted for name in extra)


def test_a_folders_other_modules_are_the_candidates_own(verifier: Verifier, tmp_path: Path) -> None:
    """An honest folder: the declared module imports a helper module of the folder's own."""
    folder = _folder(tmp_path, {"solution.py": "from dupes_impl import find_duplicates\n", "dupes_impl.py": GOOD})
    ev = verifier.check(folder, QUICK_SUITE)
    assert ev.ok, (ev.reason, [f.detail_untrusted[-300:] for f in ev.failures])


def test_a_candidates_own_test_file_is_never_collected(
    verifier: Verifier, suites: dict[str, Path], tmp_path: Path
) -> None:
    # a test file of the candidate's that would pass everything if pytest ran it
    folder = _folder(tmp_path, {"solution.py": WRONG, "test_forged.py": "def test_all():\n    pass\n"})
    ev = verifier.check(folder, suites["module"])
    assert ev.status is Status.FAILED and ev.counts.expected == 1, (ev.status, ev.counts)


def test_a_module_the_tests_do_not_declare_is_not_theirs_to_import(verifier: Verifier, tmp_path: Path) -> None:
    """The tests import `util`, which the suite does not declare: the candidate's is not there for them."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_u.py").write_text(
        "import importlib\n\n\ndef test_util_is_not_the_candidates():\n"
        "    try:\n        importlib.import_module('util_' + 'mod')\n    except ImportError:\n        return\n"
        "    raise AssertionError('the candidate module reached the tests')\n"
    )
    folder = _folder(tmp_path, {"solution.py": "x = 1\n", "util_mod.py": "y = 2\n"})
    ev = verifier.check(folder, suite)
    assert ev.ok, (ev.reason, [f.detail_untrusted[-300:] for f in ev.failures])


#: Trees whose digest and deployed files could differ, each refused before it is hashed.
ALIASES: list[tuple[str, dict[str, str]]] = [
    # the reproducer: two spellings of one file, the good one sorted first
    ("two spellings", {"solution.py": GOOD, "./solution.py": WRONG}),
    # a case-only duplicate: one file on a case-insensitive disk
    ("case", {"solution.py": GOOD, "Solution.py": WRONG}),
    # NFC and NFD spellings of one name: one file on a normalising disk
    ("unicode", {"caf\u00e9.py": GOOD, "cafe\u0301.py": WRONG}),
    # a package and a module of one name: the package runs, a reader sees the module
    ("package and module", {"solution.py": WRONG, "solution/__init__.py": GOOD}),
    # compiled bytecode beside the source it would stand in for
    ("bytecode", {"solution.py": WRONG, "__pycache__/solution.cpython-311.pyc": "x"}),
    # a file that is also a folder
    ("file and folder", {"solution.py": GOOD, "solution.py/x": WRONG}),
    # a path that climbs out of the folder
    ("dot-dot", {"solution.py": GOOD, "../solution.py": WRONG}),
]  # fmt: skip


@pytest.mark.parametrize("tree", [t for _, t in ALIASES], ids=[n for n, _ in ALIASES])
def test_a_tree_that_is_not_canonical_is_refused_through_every_door(verifier: Verifier, tree: dict[str, str]) -> None:
    from verifier.agents.tools import make_run_test_suite

    with pytest.raises(InvalidInput, match="is refused: it has"):
        Candidate.from_files(tree)  # the Python API
    tool = make_run_test_suite(QUICK_SUITE, verifier=verifier, cache=False)
    ev = tool.verify(None, {"candidate_source": tree})  # an agent's file state
    assert ev.status is Status.INVALID_INPUT and ev.candidate_sha256, (ev.status, ev.reason)


def test_a_case_only_duplicate_on_disk_is_refused(verifier: Verifier, tmp_path: Path) -> None:
    # the CLI's door: a case-sensitive disk holds both
    folder = _folder(tmp_path, {"solution.py": GOOD, "Solution.py": WRONG})
    ev = verifier.check(folder, QUICK_SUITE)
    assert ev.status is Status.INVALID_INPUT and "case-insensitive" in ev.reason


def test_the_longest_names_the_canonical_form_allows_are_created(verifier: Verifier) -> None:
    """The limits are the sandbox's own: a name of MAX_NAME_BYTES and a path of MAX_PATH_BYTES
    (non-ASCII, NFC) are written and run, never an infra_error."""
    stem = "mm" + "\u00e9" * 125  # 252 bytes of UTF-8, and ".py"
    deep = "/".join(["d" * 200] * 20)
    last = "x" * (trees.MAX_PATH_BYTES - len(deep) - 1)
    tree = {
        "solution.py": f"from {stem} import find_duplicates\n",
        f"{stem}.py": GOOD,
        f"{deep}/{last}": "data",
    }
    assert len(f"{stem}.py".encode()) == trees.MAX_NAME_BYTES
    assert len(f"{deep}/{last}".encode()) == trees.MAX_PATH_BYTES
    ev = verifier.check(Candidate.from_files(tree), QUICK_SUITE)
    assert ev.ok, (ev.status, ev.reason, [f.detail_untrusted[-300:] for f in ev.failures])


@pytest.mark.parametrize(
    "update",
    [{"file_size_bytes": 4096}, {"scratch_bytes": 1024**2}],
    ids=["over the file size limit", "over the scratch space"],
)
def test_files_the_sandbox_cannot_hold_are_the_inputs_fault_not_ours(
    sandbox_image: str, update: dict[str, int]
) -> None:
    # a folder whose own size would make the sandbox's set-up fail
    tree = {"solution.py": GOOD, **{f"blob/{i}.bin": "x" * 8192 for i in range(150)}}
    with Verifier(image=sandbox_image, limits=Limits(timeout_s=60, **update)) as v:
        ev = v.check(Candidate.from_files(tree), QUICK_SUITE)
    assert ev.status is Status.INVALID_INPUT, (ev.status, ev.reason)


def _raw_run(verifier: Verifier, suite: Path, modules: list[str], files: dict[str, bytes]) -> tuple[Status, str]:
    """A job the host would never send (its checks bypassed), run in a real sandbox: the status
    and the first failure's summary."""
    loaded = load_suite(suite)
    limits = loaded.limits(verifier.limits)
    nonce = secrets.token_hex(16)
    job = verifier._job(Candidate.from_text(GOOD), loaded, limits, nonce)
    header = read_job(io.BytesIO(job.stdin))
    assert header is not None
    stdin = encode_job(nonce, modules, files, loaded.files, header[0].config)
    raw = verifier.backend.run(dataclasses.replace(job, stdin=stdin))
    verdict = judge_result(raw, read_result(raw, nonce, limits.output_bytes))
    return verdict.status, verdict.failures[0].message if verdict.failures else ""


#: (modules the job names, its candidate files): jobs that got past a host without its checks.
BYPASSES: list[tuple[str, list[str], Callable[[], dict[str, bytes]]]] = [
    # the suite's module named as the candidate's (the old host sent every module of a folder)
    ("suite module", ["solution", "helpers"], lambda: {"solution.py": WRONG.encode(), "helpers.py": b"reference = 0"}),
    # two spellings of one file
    ("two spellings", ["solution"], lambda: {"solution.py": GOOD.encode(), "./solution.py": WRONG.encode()}),
    # a case-only duplicate
    ("case", ["solution"], lambda: {"solution.py": GOOD.encode(), "Solution.py": WRONG.encode()}),
]  # fmt: skip


@pytest.mark.parametrize(("modules", "files"), [b[1:] for b in BYPASSES], ids=[b[0] for b in BYPASSES])
def test_the_runner_refuses_what_the_host_would_have(
    verifier: Verifier, suites: dict[str, Path], modules: list[str], files: Callable[[], dict[str, bytes]]
) -> None:
    """Defence in depth: the runner applies the same rules, and the refusal is the candidate's."""
    status, summary = _raw_run(verifier, suites["module"], modules, files())
    assert status is Status.ERROR, (status, summary)
    assert "may not replace" in summary or "not canonical" in summary, summary


def test_image_modules_list_everything_the_image_adds_to_the_standard_library(
    docker_client: docker.DockerClient, sandbox_image: str
) -> None:
    """IMAGE_MODULES (runner/protocol/constants.py) against the built image: every top-level module it can import."""
    program = (
        "import pkgutil, sys\n"
        "print('\\n'.join(sorted({m.name for m in pkgutil.iter_modules()} - set(sys.stdlib_module_names))))\n"
    )
    out = docker_client.containers.run(
        sandbox_image, ["python3", "-I", "-c", program], remove=True, network_mode="none", user="2000:2000"
    )
    names = {n for n in out.decode().split() if n.isidentifier()}
    assert names, out
    missing = sorted(names - IMAGE_MODULES - trees.STDLIB_MODULES)
    assert not missing, f"add these to protocol.IMAGE_MODULES: {missing}"
