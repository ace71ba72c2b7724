"""The language corpus itself (no sandbox): its shape (issue 36 §4: at least 8 problems, each with
a correct and at least two wrong solutions in every language, every kind of wrong solution met by
every language), and the plain judge's verdicts on its interpreted solutions (quick: nothing to
compile), so that a corpus that says the wrong status fails here before the slow Docker tests."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.programs import language_corpus as corpus
from verifier.runner.cases import compare
from verifier.runner.languages import NAMES

ROOT = Path(__file__).resolve().parents[2]
WRONG_KINDS = {"wrong_answer", "timeout", "runtime_error", "compile_error"}


def test_every_problem_has_a_correct_and_two_wrong_solutions_in_every_language() -> None:
    assert len(corpus.PROBLEMS) >= 8
    assert set(corpus.LANGUAGES) == set(NAMES)
    for name, cases in corpus.PROBLEMS.items():
        assert len(cases) >= 3, name
        assert corpus.COMPARE[name] in {"exact", "tokens", "float"}
        for given, want in cases:  # every expected output is right by its own comparison
            assert compare(corpus.COMPARE[name], want.encode(), want.encode()).ok, (name, given)
        for language in corpus.LANGUAGES:
            notes = [s.note for s in corpus.SOLUTIONS if s.problem == name and s.language == language]
            assert sum(n.startswith("ok") for n in notes) == 1, (name, language, notes)
            wrong = [n for n in notes if not n.startswith("ok")]
            assert len(set(wrong)) >= 2 and set(wrong) <= WRONG_KINDS, (name, language, notes)
    for language in corpus.LANGUAGES:
        kinds = Counter(s.note for s in corpus.SOLUTIONS if s.language == language)
        assert set(kinds) >= WRONG_KINDS, (language, kinds)
        assert min(kinds[k] for k in WRONG_KINDS - {"timeout"}) >= 3, (language, kinds)
    sources = Counter((s.language, s.source) for s in corpus.SOLUTIONS)
    assert max(sources.values()) == 1, "a wrong solution identical to another"


@pytest.mark.parametrize("language", ["python", "bash", "nodejs"])
def test_the_plain_judge_gives_the_interpreted_solutions_their_statuses(language: str) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.languages_plain import available, judge

    if not available(language):
        pytest.skip(f"the host has no {language}: the plain judge cannot run it here")
    wrong = []
    for sol in corpus.SOLUTIONS:
        if sol.language != language or sol.note == "timeout":  # the time limits: in the Docker test
            continue
        got = judge(
            language,
            sol.source,
            corpus.PROBLEMS[sol.problem],
            time_limit_s=corpus.TIME_LIMIT_S,
            memory_bytes=corpus.MEMORY_BYTES,
            compile_timeout_s=corpus.COMPILE_TIMEOUT_S,
            compare_mode=corpus.COMPARE[sol.problem],
        )
        if got != sol.expect:
            wrong.append((sol.problem, sol.note, sol.expect, got))
    assert not wrong
