"""pytest's command-line options as the review knows them: which take a value, which a user may add.

`check` validates ``--pytest-args``: extra arguments for both sides' sessions. Allowed are
pytest's own options that select tests or change how results are worded, never where results,
plugins or configuration come from, nor which tests run to the end (`ALLOWED`; each refused
option has its reason in `REFUSED`, anything else is unknown and refused, so a plugin's option
cannot slip through). Paths are not arguments here: they are `--test-path`, which the review
also uses to decide which files are tests.

`paths` reads the paths among a list of arguments (``addopts``): what pytest takes as the
session's paths when the command line gives none.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from verifier.errors import InvalidInput

#: Options a user may pass with --pytest-args: name -> whether it takes a value.
ALLOWED: dict[str, bool] = {
    "-k": True,
    "-m": True,
    "--deselect": True,
    "--ignore": True,
    "--ignore-glob": True,
    "--strict-config": False,
    "--strict-markers": False,
    "--strict": False,
    "--runxfail": False,
    "--keep-duplicates": False,
    "--continue-on-collection-errors": False,
    "--import-mode": True,
    "--assert": True,
    "-W": True,
    "--pythonwarnings": True,
    "--disable-warnings": False,
    "--disable-pytest-warnings": False,
    "-s": False,
    "--capture": True,
    "-v": False,
    "--verbose": False,
    "-q": False,
    "--quiet": False,
    "--verbosity": True,
    "-r": True,
    "--report-chars": True,
    "-l": False,
    "--showlocals": False,
    "--no-showlocals": False,
    "--tb": True,
    "--xfail-tb": False,
    "--show-capture": True,
    "--full-trace": False,
    "--no-header": False,
    "--no-summary": False,
    "--no-fold-skipped": False,
    "--force-short-summary": False,
    "--color": True,
    "--code-highlight": True,
    "--durations": True,
    "--durations-min": True,
    "--setup-show": False,
    "--doctest-modules": False,
    "--doctest-glob": True,
    "--doctest-report": True,
    "--doctest-ignore-import-errors": False,
    "--doctest-continue-on-failure": False,
    "--log-level": True,
    "--log-format": True,
    "--log-date-format": True,
    "--log-cli-level": True,
    "--log-disable": True,
    "--hypothesis-verbosity": True,
    "--hypothesis-show-statistics": False,
    "--hypothesis-explain": False,
}

_PLUGINS = "it would load a plugin into the session whose results the review reads"
_CONFIG = "it changes which configuration or root pytest uses (the review reads it to tell tests from code)"
_ALL_RUN = "every collected test must run to its end, in the repository's order"
_NO_TESTS = "it runs no tests"
_FILES = "it writes results of its own (the review's reports are the results)"
_ALONE = "it needs a terminal or the network"
_XDIST = "each side runs in one process (pytest-xdist is not supported)"
_HYPOTHESIS = "the review sets Hypothesis' profile (derandomized, no database)"
#: Options refused, with the reason the error gives: name -> (takes a value, reason).
REFUSED: dict[str, tuple[bool, str]] = {
    "-p": (True, _PLUGINS),
    "--disable-plugin-autoload": (False, _PLUGINS),
    "--pyargs": (False, "it makes paths import names, found outside the tree the review splits"),
    "-c": (True, _CONFIG),
    "--config-file": (True, _CONFIG),
    "--inifile": (True, _CONFIG),
    "--rootdir": (True, _CONFIG),
    "--confcutdir": (True, _CONFIG),
    "--noconftest": (False, _CONFIG),
    "-o": (True, _CONFIG),
    "--override-ini": (True, _CONFIG),
    "--collect-in-virtualenv": (False, _CONFIG),
    "-x": (False, _ALL_RUN),
    "--exitfirst": (False, _ALL_RUN),
    "--maxfail": (True, _ALL_RUN),
    "--max-warnings": (True, _ALL_RUN),
    "--sw": (False, _ALL_RUN),
    "--stepwise": (False, _ALL_RUN),
    "--sw-skip": (False, _ALL_RUN),
    "--stepwise-skip": (False, _ALL_RUN),
    "--sw-reset": (False, _ALL_RUN),
    "--stepwise-reset": (False, _ALL_RUN),
    "--lf": (False, _ALL_RUN),
    "--last-failed": (False, _ALL_RUN),
    "--ff": (False, _ALL_RUN),
    "--failed-first": (False, _ALL_RUN),
    "--nf": (False, _ALL_RUN),
    "--new-first": (False, _ALL_RUN),
    "--lfnf": (True, _ALL_RUN),
    "--last-failed-no-failures": (True, _ALL_RUN),
    "--cache-clear": (False, _ALL_RUN),
    "--collect-only": (False, _NO_TESTS),
    "--co": (False, _NO_TESTS),
    "--fixtures": (False, _NO_TESTS),
    "--funcargs": (False, _NO_TESTS),
    "--fixtures-per-test": (False, _NO_TESTS),
    "--markers": (False, _NO_TESTS),
    "--setup-only": (False, _NO_TESTS),
    "--setup-plan": (False, _NO_TESTS),
    "--cache-show": (False, _NO_TESTS),
    "-h": (False, _NO_TESTS),
    "--help": (False, _NO_TESTS),
    "-V": (False, _NO_TESTS),
    "--version": (False, _NO_TESTS),
    "--junit-xml": (True, _FILES),
    "--junitxml": (True, _FILES),
    "--junit-prefix": (True, _FILES),
    "--basetemp": (True, _FILES),
    "--debug": (False, _FILES),
    "--log-file": (True, _FILES),
    "--report-log": (True, _FILES),
    "--trace-config": (False, _FILES),
    "--pdb": (False, _ALONE),
    "--pdbcls": (True, _ALONE),
    "--trace": (False, _ALONE),
    "--pastebin": (True, _ALONE),
    "-f": (False, _ALONE),
    "--looponfail": (False, _ALONE),
    "-n": (True, _XDIST),
    "--numprocesses": (True, _XDIST),
    "--maxprocesses": (True, _XDIST),
    "--dist": (True, _XDIST),
    "-d": (False, _XDIST),
    "--tx": (True, _XDIST),
    "--hypothesis-profile": (True, _HYPOTHESIS),
    "--hypothesis-seed": (True, _HYPOTHESIS),
}


def _takes_value(name: str) -> bool | None:
    """Whether a known option takes a value (None: unknown to the review)."""
    if name in ALLOWED:
        return ALLOWED[name]
    return REFUSED[name][0] if name in REFUSED else None


def _options(tokens: Sequence[str]) -> list[tuple[str, str | None]]:
    """(option, value) for each option of `tokens`, and ('', token) for each positional one."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok == "--" or not tok.startswith("-") or tok == "-":
            out.append(("", tok))
            continue
        if tok.startswith("--"):
            name, eq, value = tok.partition("=")
            takes = _takes_value(name)
            # An option the review does not know is taken to consume the word after it (pytest-cov's
            # `--cov src`): a path is never invented from an option's value.
            if not eq and i < len(tokens) and (takes or (takes is None and not tokens[i].startswith("-"))):
                value, eq, i = tokens[i], "=", i + 1
            out.append((name, value if eq else None))
            continue
        for pos in range(1, len(tok)):  # a cluster of short options: -vv, -rA, -kfoo
            name = "-" + tok[pos]
            if _takes_value(name):
                rest = tok[pos + 1 :]
                if not rest and i < len(tokens):
                    rest, i = tokens[i], i + 1
                out.append((name, rest))
                break
            out.append((name, None))
    return out


def check(args: Sequence[str]) -> tuple[str, ...]:
    """`args` when every one is an option a review may add (`ALLOWED`); InvalidInput naming the first that is not."""
    for name, value in _options(args):
        if not name:
            raise InvalidInput(
                f"--pytest-args: {value!r} is not an option; give test files and folders with --test-path"
            )
        if name in REFUSED:
            raise InvalidInput(f"--pytest-args: {name} is refused: {REFUSED[name][1]}")
        if name not in ALLOWED:
            raise InvalidInput(
                f"--pytest-args: {name} is not an option the review allows (pytest's selection, warning and "
                "reporting options only, e.g. -k, -m, --deselect, -W, --tb; see docs/review.md)"
            )
        if ALLOWED[name] and not value:
            raise InvalidInput(f"--pytest-args: {name} needs a value")
        if not ALLOWED[name] and value is not None:
            raise InvalidInput(f"--pytest-args: {name} takes no value")
    return tuple(args)


def parse(text: str) -> tuple[str, ...]:
    """`--pytest-args` as one string, split as a shell would, then `check`ed."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise InvalidInput(f"--pytest-args: {exc}") from None
    return check(tokens)


def paths(args: Sequence[str]) -> list[str]:
    """The positional arguments of `args`: what pytest takes as the session's paths."""
    return [value for name, value in _options(args) if not name and value and value != "--"]
