"""Programs in other languages in the real sandbox (issue 36): the corpus of
`language_corpus.py` gets the statuses it names, and the plain judge (`bench/languages_plain.py`:
the same commands on the host, no sandbox) gives the same verdicts where the host has the
toolchain. One language image and one warm pool for all of it (the image takes minutes to
build the first time, so these tests are few and share it: one xdist group)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from tests.programs import language_corpus as corpus
from verifier import Candidate, Limits, Verifier
from verifier.cli import app
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("languages")]

ROOT = Path(__file__).resolve().parents[2]
A_PLUS_B = ROOT / "examples" / "programs" / "a_plus_b"


@pytest.fixture(scope="module")
def pool(sandbox_image: str, docker_client: docker.DockerClient) -> Iterator[Verifier]:
    from verifier.sandbox.image import language_image

    language_image(docker_client, "cpp")  # built once (minutes), before any check waits on it
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, preload=""), image=sandbox_image, limits=Limits(timeout_s=60)
    ) as v:
        yield v


def write_suite(root: Path, problem: str) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "suite.toml").write_text(
        'kind = "program"\n[program]\n'
        f"time_limit_s = {corpus.TIME_LIMIT_S}\nmemory_bytes = {corpus.MEMORY_BYTES}\n"
        f"compile_timeout_s = {corpus.COMPILE_TIMEOUT_S}\n"
    )
    for i, (given, want) in enumerate(corpus.PROBLEMS[problem], 1):
        (root / "cases" / f"{i}.in").write_text(given)
        (root / "cases" / f"{i}.out").write_text(want)
    return root


def test_the_corpus_gets_its_statuses_and_agrees_with_the_plain_judge(pool: Verifier, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.languages_plain import available, judge

    suites = {name: write_suite(tmp_path / name, name) for name in corpus.PROBLEMS}
    wrong, disagree = [], []
    for sol in corpus.SOLUTIONS:
        ev = pool.check(Candidate.from_text(sol.source), suites[sol.problem], language=sol.language)
        got = ev.status.value
        assert ev.program is not None and ev.program.language == sol.language, (sol.language, sol.note, ev.reason)
        assert ev.program.toolchain, ev.program
        if got != sol.expect:
            wrong.append((sol.language, sol.problem, sol.note, got, ev.reason))
        if available(sol.language):
            plain = judge(
                sol.language,
                sol.source,
                corpus.PROBLEMS[sol.problem],
                time_limit_s=corpus.TIME_LIMIT_S,
                memory_bytes=corpus.MEMORY_BYTES,
                compile_timeout_s=corpus.COMPILE_TIMEOUT_S,
            )
            if plain != got:
                disagree.append((sol.language, sol.problem, sol.note, got, plain))
    assert not wrong
    assert not disagree


def test_check_a_cpp_program_from_the_command_line(pool: Verifier) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["check", str(A_PLUS_B / "good.cpp"), "--suite", str(A_PLUS_B / "suite"), "--json"])
    assert done.exit_code == 0, done.output
    ev = json.loads(done.stdout)
    assert ev["ok"] and ev["program"]["language"] == "cpp" and ev["program"]["compile"]["ok"]
    assert any(item.startswith("g++=") for item in ev["program"]["toolchain"])
    mismatch = runner.invoke(
        app, ["check", str(A_PLUS_B / "good.cpp"), "--suite", str(A_PLUS_B / "suite"), "--language", "java", "--json"]
    )
    ev = json.loads(mismatch.stdout)
    assert mismatch.exit_code == 2 and ev["status"] == "invalid_input"
    assert "cpp" in ev["reason"] and "java" in ev["reason"]
