"""Programs in other languages in the real sandbox (issue 36): every solution of the corpus
(`language_corpus/`: 8 problems, a correct and at least two wrong solutions of each in every
language) gets the status it names, and the plain judge (`bench/languages_plain.py`: the same
commands and limits on the host, no sandbox) gives the same verdicts, per language; a language
whose toolchain the host lacks is skipped there, saying so. The `sum` problem (every kind of wrong
solution in every language) gets the same statuses under gVisor. One language image and one warm
reuse pool for all of it (the image takes minutes to build the first time, so these tests share
it: one xdist group)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from tests.programs import language_corpus as corpus
from verifier import Candidate, Limits, Verifier
from verifier.cli import app
from verifier.limits import PoolConfig
from verifier.runner.languages import LANGUAGES

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("languages")]

ROOT = Path(__file__).resolve().parents[2]
A_PLUS_B = ROOT / "examples" / "programs" / "a_plus_b"
MiB = 1024**2
#: Under gVisor rustc's resident memory reads 330-380 MiB: past the default compile memory of a
#: 512 MiB sandbox (docs/programs.md), so the gVisor pool gets a bigger sandbox.
GVISOR_LIMITS = Limits(timeout_s=60, memory_bytes=768 * MiB, runtime="gvisor")

Statuses = Callable[[str], dict[int, str]]


def of_language(language: str) -> list[tuple[int, corpus.Solution]]:
    """The corpus' solutions in `language`, by their index in `corpus.SOLUTIONS`."""
    return [(i, sol) for i, sol in enumerate(corpus.SOLUTIONS) if sol.language == language]


def check_all(
    verifier: Verifier, solutions: list[tuple[int, corpus.Solution]], suites: dict[str, Path]
) -> dict[int, str]:
    out = {}
    for i, sol in solutions:
        ev = verifier.check(Candidate.from_text(sol.source), suites[sol.problem], language=sol.language)
        if sol.language == "python":
            assert ev.program is None, ev.program
        else:
            assert ev.program is not None and ev.program.language == sol.language, (sol, ev.reason)
            assert ev.program.toolchain, ev.program
        out[i] = ev.status.value
    return out


def wrongly_judged(got: dict[int, str]) -> list[tuple[str, str, str, str, str]]:
    return [
        (s.language, s.problem, s.note, s.expect, got[i])
        for i, s in enumerate(corpus.SOLUTIONS)
        if i in got and got[i] != s.expect
    ]


@pytest.fixture(scope="module")
def pool(sandbox_image: str, docker_client: docker.DockerClient) -> Iterator[Verifier]:
    from verifier.sandbox.image import language_image

    language_image(docker_client, "cpp")  # built once (minutes), before any check waits on it
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, preload=""), image=sandbox_image, limits=Limits(timeout_s=60)
    ) as v:
        yield v


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("language-corpus")
    return {name: corpus.write_suite(root / name, name) for name in corpus.PROBLEMS}


@pytest.fixture(scope="module")
def sandbox_statuses(pool: Verifier, suites: dict[str, Path]) -> Statuses:
    """Each language's verdicts on the reuse pool, run once and shared by the tests below."""
    done: dict[str, dict[int, str]] = {}

    def of(language: str) -> dict[int, str]:
        if language not in done:
            done[language] = check_all(pool, of_language(language), suites)
        return done[language]

    return of


@pytest.mark.parametrize("language", corpus.LANGUAGES)
def test_the_corpus_gets_its_statuses(sandbox_statuses: Statuses, language: str) -> None:
    got = sandbox_statuses(language)
    assert len(got) >= 3 * len(corpus.PROBLEMS)
    assert not wrongly_judged(got)


@pytest.mark.parametrize("language", corpus.LANGUAGES)
def test_the_plain_judge_gives_the_sandboxs_verdicts(sandbox_statuses: Statuses, language: str) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.languages_plain import available, judge

    if not available(language):
        lang = LANGUAGES[language]
        tools = sorted({lang.run[0], *(lang.compile[:1] if lang.compile else ())} - {"./build/main"})
        missing = [t for t in tools if shutil.which(t) is None]
        pytest.skip(
            f"the host has no {' '.join(missing)}: the plain judge cannot run {language} here "
            "(the sandbox's verdicts are still held to the corpus' statuses by test_the_corpus_gets_its_statuses)"
        )
    got = sandbox_statuses(language)
    plain = {
        i: judge(
            sol.language,
            sol.source,
            corpus.PROBLEMS[sol.problem],
            time_limit_s=corpus.TIME_LIMIT_S,
            memory_bytes=corpus.MEMORY_BYTES,
            compile_timeout_s=corpus.COMPILE_TIMEOUT_S,
            compare_mode=corpus.COMPARE[sol.problem],
        )
        for i, sol in of_language(language)
    }
    disagree = [
        (corpus.SOLUTIONS[i].problem, corpus.SOLUTIONS[i].note, got[i], plain[i]) for i in plain if plain[i] != got[i]
    ]
    assert not disagree, "(problem, solution, verifier, plain judge)"
    assert not wrongly_judged(plain)  # and the corpus says what a plain judge says


@pytest.mark.gvisor
def test_every_language_gets_the_same_statuses_under_gvisor(
    sandbox_image: str, docker_client: docker.DockerClient, suites: dict[str, Path]
) -> None:
    """`sum` in every language: a correct solution and every kind of wrong one."""
    from verifier.sandbox.image import language_image

    language_image(docker_client, "c")
    solutions = [(i, s) for i, s in enumerate(corpus.SOLUTIONS) if s.problem == "sum"]
    assert {s.language for _, s in solutions} == set(corpus.LANGUAGES)
    with Verifier.pooled(
        PoolConfig(policy="reuse", size=1, preload=""), image=sandbox_image, limits=GVISOR_LIMITS
    ) as v:
        got = check_all(v, solutions, suites)
    assert not wrongly_judged(got)


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
