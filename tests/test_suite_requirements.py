"""A suite's `requirements` (suite.toml or requirements.txt): which lines are refused and how,
and what the Verifier does with an environment (unit tests: FakeBackend, no engine)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from verifier.cli import app
from verifier.cluster.backend import agreed_environment
from verifier.cluster.node import NodeRefused
from verifier.errors import InvalidInput
from verifier.evidence import Fault, Status
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.environment import Environment, wheel_modules
from verifier.sandbox.fake import FakeBackend, answer
from verifier.sandbox.requirements import DependencySpec
from verifier.suite import load_suite
from verifier.verify import Verifier

TEST = "from solution import f\n\ndef test_f():\n    assert f() == 1\n"
GOOD = "def f():\n    return 1\n"


def _suite(tmp_path: Path, toml: str = "", requirements: str | None = None) -> Path:
    root = tmp_path / "suite"
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_f.py").write_text(TEST)
    if toml:
        (root / "suite.toml").write_text(toml)
    if requirements is not None:
        (root / "requirements.txt").write_text(requirements)
    return root


def test_requirements_from_the_manifest_or_the_file(tmp_path: Path) -> None:
    toml = _suite(tmp_path / "a", 'requirements = ["pandas==2.*", "numpy>=2,<3"]\n')
    assert load_suite(toml).requirements.requirements == ("numpy>=2,<3", "pandas==2.*")
    text = _suite(tmp_path / "b", requirements="# the packages\nnumpy>=2  # arrays\n\n")
    assert load_suite(text).requirements.requirements == ("numpy>=2",)
    assert load_suite(_suite(tmp_path / "c")).requirements.requirements == ()


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("pkg @ https://example.invalid/pkg.whl", "direct reference"),
        ("git+https://example.invalid/x.git", "direct reference"),
        ("./vendor/pkg", "direct reference"),
        ("-i https://example.invalid/simple", "pip option '-i'"),
        ("--index-url https://example.invalid/simple", "pip option '--index-url'"),
        ("-f /tmp/wheels", "pip option '-f'"),
        ("-r other.txt", "pip option '-r'"),
        ("numpy$(whoami)", "not a requirement"),
    ],
)
def test_refused_lines_are_named_in_either_form(tmp_path: Path, line: str, words: str) -> None:
    with pytest.raises(InvalidInput, match=words) as from_file:
        load_suite(_suite(tmp_path / "file", requirements=f"numpy\n{line}\n"))
    assert "requirements.txt:2" in str(from_file.value)
    with pytest.raises(InvalidInput, match=words) as from_toml:
        load_suite(_suite(tmp_path / "toml", f"requirements = ['numpy', {line!r}]\n"))
    assert "requirements[2]" in str(from_toml.value)


def test_both_forms_at_once_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"both suite\.toml requirements and requirements\.txt"):
        load_suite(_suite(tmp_path, 'requirements = ["numpy"]\n', requirements="numpy\n"))


def test_a_refused_line_is_invalid_input_never_a_verdict(tmp_path: Path) -> None:
    backend = FakeBackend(answer)
    evidence = Verifier(backend=backend, image="img").check(GOOD, _suite(tmp_path, requirements="x @ file:///x\n"))
    assert (evidence.status, evidence.fault, evidence.ok) == (Status.INVALID_INPUT, Fault.INPUT, False)
    assert "requirements.txt:1" in evidence.reason
    assert backend.jobs == []


def test_the_environment_is_the_jobs_image_and_in_the_evidence_and_its_id(tmp_path: Path) -> None:
    def on_its_image(job: SandboxJob) -> RawRun:  # the run reports the id of the image it ran on
        made = {e.tag: e.image_id for e in (backend.environment(DependencySpec((r,)), "img") for r in ("numpy>=2",))}
        return answer(job, image_id=made.get(job.image, "sha256:fake"))

    backend = FakeBackend(on_its_image)
    verifier = Verifier(backend=backend, image="img")
    plain = verifier.check(GOOD, _suite(tmp_path / "plain"))
    assert plain.environment is None and backend.jobs[-1].image == "img"
    numpy = verifier.check(GOOD, _suite(tmp_path / "np", requirements="numpy>=2\n"))
    pandas = verifier.check(GOOD, _suite(tmp_path / "pd", requirements="pandas\n"))
    assert numpy.ok and pandas.ok
    assert numpy.environment is not None and numpy.environment.requirements == ["numpy>=2"]
    images = [job.image for job in backend.jobs[1:]]
    assert images[0].startswith("verifier-env:") and images[0] != images[1]  # one image per environment
    assert len({plain.evidence_id, numpy.evidence_id, pandas.evidence_id}) == 3
    assert verifier.planned_evidence_id(GOOD, _suite(tmp_path / "np", requirements="numpy>=2\n")) == numpy.evidence_id


class _Packaged(FakeBackend):
    """A fake environment whose packages define the module `numpy`."""

    def environment(self, spec: DependencySpec, image: str) -> Environment:
        env = super().environment(spec, image)
        return Environment(env.digest, env.image_id, env.image_ref, False, env.packages, spec, modules=("numpy",))


def test_a_candidate_module_named_like_an_installed_package_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "cand"
    (folder / "NumPy").mkdir(parents=True)
    (folder / "NumPy" / "__init__.py").write_text("x = 1\n")
    (folder / "solution.py").write_text(GOOD)
    evidence = Verifier(backend=_Packaged(answer), image="img").check(folder, _suite(tmp_path, requirements="numpy\n"))
    assert evidence.status is Status.INVALID_INPUT
    assert "'numpy', a package of the suite's environment" in evidence.reason
    assert Verifier(backend=_Packaged(answer), image="img").check(folder, _suite(tmp_path / "none")).ok


def test_a_wheels_top_level_modules(tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in ("demo/__init__.py", "_demo_c.cpython-311-x86_64-linux-gnu.so", "six.py", "demo.libs/x.so"):
            archive.writestr(name, b"")
        archive.writestr("demo-1.0.dist-info/METADATA", b"")
        archive.writestr("demo-1.0.data/scripts/x", b"")
    assert wheel_modules(wheel) == {"demo", "_demo_c", "six"}


def _env(digest: str) -> Environment:
    return Environment(digest, "sha256:x", "x", built=False, packages=(), spec=DependencySpec(("numpy",)))


def test_ray_nodes_must_agree_on_the_environment() -> None:
    assert agreed_environment({"a": _env("d1"), "b": _env("d1")}).digest == "d1"
    with pytest.raises(NodeRefused, match=r"node b has environment d2.*node a d1"):
        agreed_environment({"a": _env("d1"), "b": _env("d2")})
    with pytest.raises(NodeRefused, match="node b cannot provide"):
        agreed_environment({"a": _env("d1"), "b": "node b cannot provide the environment: no index"})


def test_image_build_refuses_a_bad_suite_before_any_engine(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["image", "build", "--suite", str(_suite(tmp_path, requirements="-i http://x\n"))])
    assert result.exit_code == 2
    assert "requirements.txt:1" in result.output and "--index-url" not in result.output


def test_the_agent_sandbox_picks_its_image_from_requirements_or_a_suite(tmp_path: Path) -> None:
    from verifier.agents.sandbox.making import environment_image

    no_engine: Any = object()  # nothing here may reach an engine
    assert environment_image(no_engine, "img", None, None) == "img"
    assert environment_image(no_engine, "img", [], None) == "img"
    assert environment_image(no_engine, None, None, _suite(tmp_path / "plain")) is None
    with pytest.raises(InvalidInput, match="not both"):
        environment_image(no_engine, None, ["numpy"], _suite(tmp_path / "np", requirements="numpy\n"))
    with pytest.raises(InvalidInput, match="direct reference"):
        environment_image(no_engine, None, ["numpy @ https://example.invalid/numpy.whl"], None)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("numpy (>=1.0)", "numpy (>=1.0)"),  # PEP 508's parenthesised versions
        ("numpy[extra1, extra2] >= 1.0", "numpy[extra1, extra2] >= 1.0"),
        ("numpy ===1.26.4", "numpy ===1.26.4"),
        ('numpy>=1; python_version >= "3.8"', "numpy>=1"),  # true for the sandbox: kept, marker gone
        ("numpy; sys_platform == 'linux' and platform_system == 'Linux'", "numpy"),
    ],
    ids=["parenthesised", "extras", "arbitrary-equality", "marker-true", "platform-marker"],
)
def test_pep_508_lines_are_read_as_packaging_reads_them(tmp_path: Path, line: str, kept: str) -> None:
    assert load_suite(_suite(tmp_path, requirements=f"{line}\n")).requirements.requirements == (kept,)


def test_markers_are_the_sandboxs_not_the_hosts(tmp_path: Path) -> None:
    """A line whose marker is false for the sandbox's interpreter is left out; the others stay."""
    from verifier.sandbox.requirements import SANDBOX_MARKERS

    assert SANDBOX_MARKERS["python_version"] == "3.11" and SANDBOX_MARKERS["sys_platform"] == "linux"
    text = 'numpy; python_version < "3"\npandas; sys_platform == "linux"\nscipy; sys_platform == "win32"\n'
    assert load_suite(_suite(tmp_path, requirements=text)).requirements.requirements == ("pandas",)


def test_a_set_that_ends_up_empty_is_invalid_input_naming_the_line(tmp_path: Path) -> None:
    """The suite's only package dropped by its marker: the suite's fault (invalid_input, the line
    named), never the candidate's (a red verdict on an `import numpy` that could never work)."""
    suite = _suite(tmp_path, requirements='numpy; python_version < "3.0"\n')
    with pytest.raises(InvalidInput, match=r"no requirement applies.*requirements\.txt:1 'numpy; python_version"):
        load_suite(suite)
    backend = FakeBackend(answer)
    evidence = Verifier(backend=backend, image="img").check(GOOD, suite)
    assert (evidence.status, evidence.fault) == (Status.INVALID_INPUT, Fault.INPUT)
    assert "requirements.txt:1" in evidence.reason and backend.jobs == []
    toml = _suite(tmp_path / "toml", "requirements = ['numpy; sys_platform == \"win32\"']\n")
    with pytest.raises(InvalidInput, match=r"suite\.toml requirements:1 'numpy; sys_platform"):
        load_suite(toml)
