"""A candidate folder's one canonical form, and the names it may take (issue 21, items 2 and 3).
No Docker: the canonicaliser, the module rules and the host's refusals, with a fake backend."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, SUITE
from verifier import Candidate, Limits, Status, Verifier
from verifier.errors import InvalidInput
from verifier.inputs import canonical_tree
from verifier.runner import trees
from verifier.runner.protocol import IMAGE_MODULES, read_job
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, answer
from verifier.suite import load_suite, parse_manifest

GOOD = b"def f(x):\n    return x\n"


def _recording(jobs: list[SandboxJob]) -> Callable[[SandboxJob], RawRun]:
    """A fake backend's handler that keeps every job it is sent."""

    def handler(job: SandboxJob) -> RawRun:
        jobs.append(job)
        return answer(job)

    return handler


#: (name, tree, words of the refusal): each a tree that is not canonical.
NOT_CANONICAL = [
    ("dot component", {"solution.py": GOOD, "./solution.py": b"x = 1\n"}, "'.' component"),
    ("dot-dot", {"a/../solution.py": GOOD}, "'..' component"),
    ("empty component", {"a//solution.py": GOOD}, "empty component"),
    ("trailing slash", {"solution.py/": GOOD}, "empty component"),
    ("absolute", {"/solution.py": GOOD}, "absolute path"),
    ("backslash", {"pkg\\solution.py": GOOD}, "backslash"),
    ("case-only duplicate", {"solution.py": GOOD, "Solution.py": b"x = 1\n"}, "case-insensitive"),
    ("case-only folder", {"pkg/a.py": GOOD, "PKG/a.py": b"x = 1\n"}, "case-insensitive"),
    ("NFD", {"cafe\u0301.py": GOOD}, "NFC"),
    ("NFC and NFD", {"caf\u00e9.py": GOOD, "cafe\u0301.py": GOOD}, "NFC"),
    ("compatibility alias", {"\ufb01le.py": GOOD, "file.py": GOOD}, "normalising disk"),
    ("file and folder", {"a.py": GOOD, "a.py/x.py": GOOD}, "both a file and a folder"),
    ("file and folder, case", {"A": GOOD, "a/x.py": GOOD}, "both a file and a folder"),
    ("module and package", {"solution.py": b"wrong\n", "solution/__init__.py": GOOD}, "defined twice"),
    ("module and namespace", {"solution.py": GOOD, "solution/core.py": GOOD}, "defined twice"),
    ("pyc", {"solution.py": GOOD, "__pycache__/solution.cpython-311.pyc": b"\x00"}, "compiled code"),
    ("sourceless pyc", {"solution.pyc": b"\x00"}, "compiled code"),
    ("extension", {"solution.cpython-311-x86_64-linux-gnu.so": b"\x7fELF"}, "compiled code"),
    ("NUL", {"solution\x00.py": GOOD}, "U+0000"),
    ("newline", {"x.py\nstatus: passed": GOOD}, "U+000A"),
    ("escape", {"\x1b[2Jx.py": GOOD}, "U+001B"),
    ("zero width", {"solu\u200btion.py": GOOD}, "U+200B"),
    ("bidi override", {"noitulos\u202e.py": GOOD}, "U+202E"),
    ("line separator", {"a\u2028.py": GOOD}, "U+2028"),
    ("trailing space", {"solution.py ": GOOD}, "ends in a space or a dot"),
    ("trailing dot", {"pkg./a.py": GOOD}, "ends in a space or a dot"),
    ("name too long", {"a" * 253 + ".py": GOOD}, "longer than 255 bytes"),
    ("name too long in bytes", {"\u00e9" * 127 + ".py": GOOD}, "longer than 255 bytes"),
    ("path too long", {"/".join(["d" * 250] * 17) + "/a.py": GOOD}, "path longer than"),
    ("lone surrogate", {"sol\udcff.py": GOOD}, "not UTF-8"),
    ("empty path", {"": GOOD}, "empty path"),
]


@pytest.mark.parametrize(("tree", "words"), [c[1:] for c in NOT_CANONICAL], ids=[c[0] for c in NOT_CANONICAL])
def test_a_tree_that_is_not_canonical_is_refused_before_it_is_hashed(tree: dict[str, bytes], words: str) -> None:
    with pytest.raises(InvalidInput, match="is refused: it has") as caught:
        Candidate.from_files(tree)
    assert words in str(caught.value)
    assert caught.value.sha256 and len(caught.value.sha256) == 64  # the refused bytes, named
    assert caught.value.detail_untrusted.startswith("the path")
    for path in tree:  # the candidate's own path only in the untrusted detail, never in the reason
        assert not path or path == "A" or path not in str(caught.value)
    with pytest.raises(InvalidInput):
        Candidate(tree=tree)  # the constructor is the same door


def test_the_issues_two_spellings_of_one_file_never_reach_the_sandbox() -> None:
    """The reproducer of issue 21 item 3, through an agent's file state: the digest would take two
    files, the sandbox one. Refused, with the tree's digest, and no job is sent."""
    from verifier.agents.tools import make_run_test_suite

    jobs: list[SandboxJob] = []
    tree = {"solution.py": GOOD.decode(), "./solution.py": "def f(x):\n    return 0\n"}
    with Verifier(backend=FakeBackend(_recording(jobs)), image="x") as v:
        ev = make_run_test_suite(SUITE, verifier=v, cache=False).verify(None, {"candidate_source": tree})
    assert ev.status is Status.INVALID_INPUT and jobs == []
    assert "'.' component" in ev.reason and ev.candidate_sha256
    assert "./solution.py" in ev.failures[0].detail_untrusted


def test_honest_trees_are_canonical_and_kept_as_they_are() -> None:
    tree = {
        "solution.py": GOOD,
        "Helpers_Mine.py": b"",
        "pkg/__init__.py": b"",
        "pkg/sub/mod.py": GOOD,
        "data/input.txt": b"1 2 3\n",
        "templates/page.html": b"<p>",
        "templates.py": b"",  # a data folder without Python files beside a module of its name
        "caf\u00e9.py": GOOD,  # NFC
        "test_solution.py": b"def test_f():\n    assert True\n",  # the candidate's own tests, never collected
        "a" * 252 + ".py": GOOD,  # 255 bytes: the longest name the sandbox creates
        ".hidden": b"x",
    }
    cand = Candidate.from_files(tree)
    assert cand.tree == tree
    assert canonical_tree(tree) == tree


def test_a_tree_is_copied_when_the_candidate_is_made() -> None:
    """The digest and the files sent are of the same tree even if the caller's dict changes later."""
    tree = {"solution.py": GOOD}
    cand = Candidate(tree=tree)
    digest = cand.sha256
    tree["solution.py"] = b"def f(x):\n    return 0\n"
    tree["./solution.py"] = b""
    assert cand.sha256 == digest and cand.files("solution") == {"solution.py": GOOD}


def test_a_folder_on_disk_goes_through_the_same_canonicaliser(tmp_path: Path) -> None:
    (tmp_path / "solution.py").write_bytes(GOOD)
    (tmp_path / "Solution.py").write_bytes(b"def f(x):\n    return 0\n")  # a case-sensitive disk holds both
    with Verifier(backend=FakeBackend(answer), image="x") as v:
        ev = v.check(tmp_path, SUITE)
    assert ev.status is Status.INVALID_INPUT and "case-insensitive" in ev.reason
    assert ev.candidate_sha256 and "Solution.py" in ev.failures[0].detail_untrusted
    assert "Solution.py" not in ev.reason


OPTIONAL_IMPORT = b"try:\n    import fast\nexcept ImportError:\n    fast = None\n"
IMAGE = "a package of the sandbox image"


@pytest.mark.parametrize(
    ("candidate", "suite", "words"),
    [
        ({"helpers.py": GOOD}, {"helpers.py": GOOD}, "the suite's own 'helpers'"),
        ({"Helpers.py": GOOD}, {"helpers.py": GOOD}, "the suite's own 'helpers'"),
        ({"helpers/__init__.py": GOOD}, {"helpers.py": GOOD}, "the suite's own 'helpers'"),
        ({"helpers/x.py": GOOD}, {"helpers/ref.py": GOOD}, "the suite's own 'helpers'"),
        ({"conftest.py": GOOD}, {"test_a.py": b""}, "'conftest'"),
        ({"plug.py": GOOD}, {"conftest.py": b"pytest_plugins = ['plug.sub']\n"}, "'plug'"),
        ({"plug.py": GOOD}, {"conftest.py": b"pytest_plugins = 'plug'\n"}, "'plug'"),
        ({"fast.py": GOOD}, {"test_a.py": OPTIONAL_IMPORT}, "'fast'"),
        ({"np/__init__.py": GOOD}, {"test_a.py": b"import importlib\nimportlib.import_module('np')\n"}, "'np'"),
        ({"yaml.py": GOOD}, {"test_a.py": b"import pytest\nyaml = pytest.importorskip('yaml')\n"}, "'yaml'"),
        ({"json.py": GOOD}, {"test_a.py": b""}, "'json', the standard library's"),
        ({"JSON/__init__.py": GOOD}, {"test_a.py": b""}, "'json', the standard library's"),
        ({"hypothesis/__init__.py": GOOD}, {"test_a.py": b""}, f"'hypothesis', {IMAGE}"),
        ({"_pytest/x.py": GOOD}, {"test_a.py": b""}, f"'_pytest', {IMAGE}"),
        ({"py.py": GOOD}, {"test_a.py": b""}, f"'py', {IMAGE}"),
        ({"verifier_runner.py": GOOD}, {"test_a.py": b""}, "'verifier_runner'"),
        ({"sitecustomize.py": GOOD}, {"test_a.py": b""}, "'sitecustomize'"),
    ],
)
def test_a_candidate_may_not_take_a_name_of_the_sandbox_or_the_suite(
    candidate: dict[str, bytes], suite: dict[str, bytes], words: str
) -> None:
    conflict = trees.module_conflict({"solution.py": GOOD, **candidate}, suite, ["solution"])
    assert conflict is not None and words in conflict[0], conflict


def test_names_the_suite_imports_are_the_candidates_when_declared() -> None:
    suite = {"test_a.py": b"from shapes.area import square\nimport solution\n"}
    assert trees.module_conflict({"shapes/__init__.py": GOOD, "shapes/area.py": GOOD}, suite, ["shapes"]) is None
    assert trees.module_conflict({"solution.py": GOOD, "utils.py": GOOD}, suite, ["solution"]) is None
    conflict = trees.module_conflict({"solution.py": GOOD, "shapes/area.py": GOOD}, suite, ["solution"])
    assert conflict is not None and "the suite imports and does not declare" in conflict[0]


def test_only_the_declared_modules_are_the_tests_to_import() -> None:
    cand = Candidate.from_files({"shapes/__init__.py": b"", "shapes/area.py": b"", "utils.py": b"", "x/y.py": b""})
    assert cand.importable("solution", ["shapes"]) == ["shapes", "shapes.area"]
    assert cand.importable("solution", ["shapes.area"]) == ["shapes.area"]
    assert cand.importable("solution", ["solution"]) == []
    assert Candidate.from_text("x = 1\n").importable("solution", ["shapes"]) == ["solution"]


def test_the_job_names_only_the_declared_modules(tmp_path: Path) -> None:
    """A candidate folder's helper module reaches the candidate's process, never the tests' proxy."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_a.py").write_text("from solution import f\n\n\ndef test_f():\n    assert f(1) == 1\n")
    jobs: list[SandboxJob] = []
    with Verifier(backend=FakeBackend(_recording(jobs)), image="x") as v:
        ev = v.check(Candidate.from_files({"solution.py": b"from util import g as f\n", "util.py": GOOD}), suite)
    assert ev.ok, ev.reason
    import io

    job = read_job(io.BytesIO(jobs[0].stdin))
    assert job is not None
    header, files, _ = job
    assert header.modules == ["solution"] and set(files) == {"solution.py", "util.py"}


def test_a_conflict_is_invalid_input_naming_the_module_and_the_candidates_digest(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "helpers.py").write_text("def reference(x):\n    return x\n")
    (suite / "test_a.py").write_text(
        "from helpers import reference\nfrom solution import f\n\n\ndef test_f():\n    assert f(1) == reference(1)\n"
    )
    cand = Candidate.from_files({"solution.py": GOOD, "helpers.py": b"def reference(x):\n    return 0\n"})
    jobs: list[SandboxJob] = []
    with Verifier(backend=FakeBackend(_recording(jobs)), image="x") as v:
        ev = v.check(cand, suite)
    assert ev.status is Status.INVALID_INPUT and jobs == []
    assert ev.candidate_sha256 == cand.sha256
    assert "'helpers'" in ev.reason and "\n" not in ev.reason
    assert "helpers.py" in ev.failures[0].detail_untrusted


def test_files_the_sandbox_could_not_hold_are_refused_on_the_host(tmp_path: Path) -> None:
    big = Candidate.from_files({"solution.py": GOOD, "data.bin": b"\x00" * 5000})
    with Verifier(backend=FakeBackend(answer), image="x", limits=Limits(file_size_bytes=4096)) as v:
        ev = v.check(big, SUITE)
    assert ev.status is Status.INVALID_INPUT and "file size limit" in ev.reason and ev.candidate_sha256 == big.sha256
    many = Candidate.from_files({"solution.py": GOOD, **{f"d/{i}.txt": b"x" * 4097 for i in range(199)}})
    with Verifier(backend=FakeBackend(answer), image="x", limits=Limits(scratch_bytes=1024**2)) as v:
        ev = v.check(many, SUITE)
    assert ev.status is Status.INVALID_INPUT and "scratch space" in ev.reason


def test_a_suite_may_not_declare_a_name_of_the_sandbox() -> None:
    with pytest.raises(InvalidInput, match="'json', the standard library's"):
        parse_manifest(b'module = "json"\n')
    with pytest.raises(InvalidInput, match="'hypothesis', a package of the sandbox image"):
        parse_manifest(b'modules = ["hypothesis.extra"]\n')
    assert load_suite(ROOT / "tests" / "fixtures" / "shapes_suite").declared_modules == [
        "shapes",
        "shapes.area",
        "shapes.units",
    ]
    assert load_suite(SUITE).declared_modules == ["solution"]


def test_the_image_modules_cover_the_pinned_requirements() -> None:
    """Each wheel of the image's recipe is in IMAGE_MODULES (by its import name)."""
    names = {"pygments": "pygments", "pytest": "pytest", "hypothesis": "hypothesis"}
    for line in (ROOT / "sandbox_images" / "python" / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        dist = line.split("==")[0].strip().lower()
        assert names.get(dist, dist.replace("-", "_")) in IMAGE_MODULES, dist


def test_the_raw_digest_of_a_refused_tree_is_the_documented_formula_over_the_paths_as_given() -> None:
    tree = {"./solution.py": GOOD}
    with pytest.raises(InvalidInput) as caught:
        Candidate.from_files(tree)
    h = hashlib.sha256()
    for path, data in sorted(tree.items()):
        h.update(len(path).to_bytes(8, "big") + path.encode() + len(data).to_bytes(8, "big") + data)
    assert caught.value.sha256 == h.hexdigest()
