"""`verifier review` on real fix commits of real repositories, against plain pytest (issue 34 §4).

Each case is a fix commit C of a pure-Python repository no one here wrote (a change to code plus
a test that fails before it) and its parent P. For each case:

- fix:    `verifier review REPO --base P --head C --format json` must exit 0 and report each of
          the case's tests `fixed` or `added` (`edited_to_pass` where the case says the fix extends
          an existing test function: review never calls a test the change edited fixed);
- revert: the fix's code reverted on top of C (`git diff C P -- CODE_FILES` given as `--patch`
          on `--base C`: the tests stay, the fix goes) must exit 1 and report each of them `broken`;
- count:  the tests each review judged at the head (`counts.total` less `removed`, and the head
          run's `collected`) must equal what plain pytest collects at C;
- host:   plain `python -m pytest -p no:cacheprovider` on the host, in a virtualenv per
          repository (the sandbox's pinned pytest and Hypothesis plus the repository's test
          requirements named below, the tree's `src/` and root on PYTHONPATH), on C's tree (its
          count and time) and on C's tests with P's code (the case's tests must fail there: the
          cases are checked, not trusted).

The repositories are clones the script is given: `--repos-dir DIR` holds `DIR/owner__name`
(a `git clone` of each; nothing is fetched). Only the git objects are read: the script exports
trees with `git archive` into a temporary folder.

    python bench/review_real.py --repos-dir /work/realrepos-data [--only owner/name ...]
                                [--host-only] [--timeout 600]

Writes bench/results/review-real-<timestamp>.json. Not part of the test suite (CI cannot fetch).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PINS = ROOT / "sandbox_images" / "python" / "requirements.txt"
HOST_TIMEOUT = 900.0  # seconds, each plain pytest run on the host


@dataclass(frozen=True)
class Case:
    repo: str  # owner/name, cloned as REPOS_DIR/owner__name
    commit: str  # the fix commit (its first parent is the base)
    tests: tuple[str, ...]  # node ids the fix adds or makes pass: fixed/added, then broken on revert
    what: str = ""
    #: What the fix review must call them: fixed or added; edited_to_pass where the fix extends an
    #: existing test function (idna's): review never calls a test the change edited "fixed".
    fix_classes: tuple[str, ...] = ("fixed", "added")


@dataclass(frozen=True)
class Repo:
    name: str
    host_requirements: tuple[str, ...] = ()  # test requirements for the host's plain pytest
    cases: list[Case] = field(default_factory=list)


# The repositories (host requirements: what their test configuration needs beyond pytest and
# Hypothesis) and the fix commits, each checked on the host before it was listed here.
#: Per repository, the host's test requirements; TEST_PATHS: the paths pytest is given, for tests
#: its configuration does not name (slugify's unittest module test.py), as `--test-path` too.
TEST_PATHS: dict[str, tuple[str, ...]] = {"un33k/python-slugify": ("test.py",)}
EDITED = ("edited_to_pass",)
#: A new parametrized case of an existing test function: provenance is per function, so review calls
#: it edited (edited_to_pass) when the fix edits the function or its context, added otherwise.
NEW_CASE = ("fixed", "added", "edited_to_pass")
REPOS: dict[str, tuple[str, ...]] = {
    "kjd/idna": (),
    "r1chardj0n3s/parse": (),
    "tkem/cachetools": (),
    "mahmoud/boltons": (),
    "hukkin/tomli": ("python-dateutil",),  # tests/requirements.txt
    "grantjenks/python-sortedcontainers": (),
    "pytoolz/toolz": (),
    "pypa/packaging": ("pretend", "tomli_w"),  # pyproject [dependency-groups] test
    "jquast/wcwidth": ("pytest-cov",),  # tox.ini addopts --cov
    "more-itertools/more-itertools": (),
    "un33k/python-slugify": ("text-unidecode",),  # setup.py install_requires
}
CASES: list[Case] = [
    Case("kjd/idna", "e00ed2854c", ("tests/test_idna.py::IDNATests::test_encode",), "non-ASCII A-label", EDITED),
    Case("kjd/idna", "4fdcc18d1e", ("tests/test_idna.py::IDNATests::test_decode",), "invalid A-label", EDITED),
    # Not 421c19919f (unused alignment): it also deletes two tests of the behaviour it reverts, which
    # pass on the base code and fail on the head's: review says "2 rewritten", exit 1, rightly.
    Case("r1chardj0n3s/parse", "19689cf5b4", ("test_parse.py::TestFindall::test_case_sensitivity",), "findall case"),
    Case("r1chardj0n3s/parse", "5bc22a4c6d", ("test_parse.py::TestPattern::test_numbered",), "digit field numbering"),
    Case(
        "tkem/cachetools",
        "57d2e4813d",
        ("tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings",),
        "obj=None in _DescriptorBase",
    ),
    # Not 18e5930ced (@cachedmethod.cache_key): it changes what two tests assert of the base's
    # behaviour (their base versions pass on the base code, fail on the head's): "2 rewritten", exit 1.
    Case(
        "tkem/cachetools",
        "bb4b37cfc7",
        (
            "tests/test_ttl.py::TTLCacheTest::test_ttl_datetime",
            "tests/test_ttl.py::TTLCacheTest::test_ttl_expire",
        ),
        "TTLCache.expire() returns what expired",
        EDITED,
    ),
    Case("mahmoud/boltons", "c1c25da365", ("tests/test_mathutils.py::test_bits_len_bound",), "Bits length check"),
    Case("mahmoud/boltons", "ead236e278", ("tests/test_iterutils.py::test_backoff_constant_factor",), "backoff_iter"),
    Case("hukkin/tomli", "96dfe2cef7", ("tests/test_error.py::test_module_name",), "TOMLDecodeError module"),
    Case(
        "hukkin/tomli",
        "8d34a60115",
        ("tests/test_extras.py::test_invalid[invalid-day]",),
        "invalid date type",
        NEW_CASE,  # a new data file: a new parameter of test_invalid, whose context the fix edits
    ),
    Case(
        "grantjenks/python-sortedcontainers",
        "7dc426c95a",
        (
            "tests/test_coverage_sortedkeylist_modulo.py::test_update_order_consistency",
            "tests/test_coverage_sortedkeylist_negate.py::test_update_order_consistency",
        ),
        "update() ordering",
    ),
    Case(
        "grantjenks/python-sortedcontainers",
        "2b037039bb",
        ("tests/test_coverage_sorteddict.py::test_ref_counts",),
        "dict methods cached through super",
    ),
    Case(
        "pytoolz/toolz", "5a7e078c94", ("toolz/tests/test_itertoolz.py::test_partition_all",), "partition_all", EDITED
    ),
    Case("pytoolz/toolz", "6a8de2e8f6", ("toolz/tests/test_tlz.py::test_tlz",), "tlz on Python 3.11"),
    Case(
        "un33k/python-slugify", "243354893e", ("test.py::TestSlugify::test_pre_translation",), "uppercase special chars"
    ),
    Case("un33k/python-slugify", "e52c35e348", ("test.py::TestSlugify::test_accented_text",), "accented text", EDITED),
    Case(
        "pypa/packaging",
        "55cbf1b942",
        tuple(
            f"tests/test_ranges.py::TestUnboundedEnds::test_{t}"
            for t in (
                "lower_ends_order_as_one_value",
                "lower_spellings_are_one_bound",
                "upper_ends_order_as_one_value",
                "upper_spellings_are_one_bound",
            )
        ),
        "ranges: unbounded bounds",
    ),
    Case(
        "pypa/packaging",
        "8af75907bf",
        ("tests/test_utils.py::test_parse_wheel_invalid_filename[foo\\n-1.0-py3-none-any.whl]",),
        "wheel filename regex",
        NEW_CASE,  # a new entry in the parametrize list: the test function is edited
    ),
    Case("jquast/wcwidth", "4c914039ba", ("tests/test_core.py::test_wcswidth_n_exceeds_length",), "n > length"),
    # Not e4f76d5cc2 (virama with mc width): it changes what test_balinese_script asserts of the
    # base's behaviour (its base version passes on the base code, fails on the head's): "1 rewritten", exit 1.
    Case(
        "jquast/wcwidth",
        "4b1bbd73a6",
        (
            "tests/test_core.py::test_prepended_concatenation_mark_width[1536-ARABIC NUMBER SIGN]",
            "tests/test_core.py::test_prepended_concatenation_mark_width[69837-KAITHI NUMBER SIGN ABOVE]",
        ),
        "Prepended_Concatenation_Mark width 1",
    ),
    Case("more-itertools/more-itertools", "958990e22c", ("tests/test_more.py::SlicedTests::test_negative",), "sliced"),
    Case(
        "more-itertools/more-itertools",
        "f51a53bfd2",
        ("tests/test_more.py::InterleaveEvenlyTests::test_no_iterables",),
        "empty interleave_evenly",
    ),
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def export(repo: Path, commit: str, dest: Path) -> None:
    data = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit], check=True, capture_output=True
    ).stdout
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


def is_test_path(path: str) -> bool:
    return "test" in path.lower()


def code_files(repo: Path, commit: str) -> list[str]:
    """The files the commit changed that are code (not tests, not docs or changelogs)."""
    names = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", f"{commit}^", commit).split()
    return [n for n in names if n.endswith(".py") and not is_test_path(n)]


def mixed_tree(repo: Path, commit: str, dest: Path) -> None:
    """C's tree with P's version of C's code files: the fix's tests on the code before it."""
    export(repo, commit, dest)
    for name in code_files(repo, commit):
        target = dest / name
        try:
            target.write_bytes(
                subprocess.run(
                    ["git", "-C", str(repo), "show", f"{commit}^:{name}"], check=True, capture_output=True
                ).stdout
            )
        except subprocess.CalledProcessError:
            target.unlink()  # added by the fix


def host_venv(work: Path, repo_name: str, requirements: tuple[str, ...]) -> Path:
    venv = work / "venvs" / repo_name.replace("/", "__")
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "-r", str(PINS), *requirements],
            check=True,
            capture_output=True,
        )
    return py


def host_pytest(py: Path, tree: Path, paths: tuple[str, ...]) -> dict[str, Any]:
    """Plain pytest on a tree: wall time, collected (junit testcases), each test's outcome."""
    junit = tree.parent / f"{tree.name}.junit.xml"
    path = [str(tree / "src")] if (tree / "src").is_dir() else []
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": os.pathsep.join([*path, str(tree)]),
        "PYTHONHASHSEED": "0",
        "TZ": "UTC",
    }
    cmd = [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *paths]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=HOST_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"wall_s": HOST_TIMEOUT, "exit": None, "collected": 0, "summary": "timed out", "outcomes": {}}
    wall = time.perf_counter() - t0
    outcomes: dict[str, str] = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            classname = case.get("classname", "")
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = child.tag
            outcomes[f"{classname}::{case.get('name', '')}"] = outcome
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    return {
        "wall_s": round(wall, 2),
        "exit": proc.returncode,
        "collected": len(outcomes),
        "summary": tail[0] if tail else "",
        "outcomes": outcomes,
    }


def junit_key(node_id: str) -> str:
    """pytest's junit names a test by dotted module path + class, then the function name."""
    path, _, rest = node_id.partition("::")
    module = path.removesuffix(".py").replace("/", ".")
    parts = rest.split("::")
    return "::".join([".".join([module, *parts[:-1]]), parts[-1]])


def review(repo: Path, args: list[str], timeout: float) -> dict[str, Any]:
    env = os.environ | {"VERIFIER_IMAGE_PRUNE": "0"}
    cmd = ["verifier", "review", str(repo), *args, "--format", "json", "--timeout", str(timeout)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=4 * timeout)
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"exit": proc.returncode, "wall_s": round(wall, 2), "stderr": proc.stderr.strip()[-600:]}
    try:
        evidence = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return out
    rows = {r["test_id"]: r["classification"] for r in evidence["tests"]}
    head_runs = [r for r in evidence["runs"] if r["side"] == "head"]
    out |= {
        "counts": evidence["counts"],
        "judged": evidence["counts"]["total"] - evidence["counts"]["removed"],  # the tests at the head
        "head_collected": head_runs[0]["collected"] if head_runs else None,
        "rows": rows,
        "environment_s": evidence["timings"]["environment_s"],
        "total_s": evidence["timings"]["total_s"],
        "reason": evidence["reason"],
        "sources": sorted({s for r in evidence["runs"] for s in r["environment"]["sources"]}),
        # a run that did not complete keeps the end of its log: the next finding can be read here
        "incomplete_runs": [
            {"side": r["side"], "stopped": r["stopped"], "log_tail": r["log_tail_untrusted"][-1500:]}
            for r in evidence["runs"]
            if not r["complete"]
        ],
    }
    return out


def run_case(case: Case, repos_dir: Path, work: Path, host_only: bool, timeout: float) -> dict[str, Any]:
    repo = repos_dir / case.repo.replace("/", "__")
    commit = git(repo, "rev-parse", f"{case.commit}^{{commit}}").strip()
    parent = git(repo, "rev-parse", f"{commit}^").strip()
    result: dict[str, Any] = {
        "repo": case.repo,
        "commit": commit[:10],
        "parent": parent[:10],
        "tests": list(case.tests),
        "what": case.what,
        "problems": [],
    }
    problems: list[str] = result["problems"]
    if not case.tests and not host_only:
        problems.append("no tests listed for this case: check it with --host-only first")
    py = host_venv(work, case.repo, REPOS[case.repo])
    head_tree = work / "trees" / f"{case.repo.replace('/', '__')}-{commit[:10]}"
    mixed = work / "trees" / f"{case.repo.replace('/', '__')}-{commit[:10]}-mixed"
    export(repo, commit, head_tree)
    if host_only:
        mixed_tree(repo, commit, mixed)
    host_head = host_pytest(py, head_tree, TEST_PATHS.get(case.repo, ()))
    if host_head["exit"] not in (0, 1):
        problems.append(f"host: plain pytest exit {host_head['exit']} at the fix: {host_head['summary']}")
    if not host_only:  # the cases were checked with --host-only before they were listed
        result["host"] = {k: v for k, v in host_head.items() if k != "outcomes"}
        for t in case.tests:
            if host_head["outcomes"].get(junit_key(t)) != "passed":
                problems.append(f"host: {t} does not pass at the fix ({host_head['outcomes'].get(junit_key(t))})")
        return review_case(case, repo, commit, parent, host_head, result, timeout)
    host_mixed = host_pytest(py, mixed, TEST_PATHS.get(case.repo, ()))
    result["host"] = {k: v for k, v in host_head.items() if k != "outcomes"}
    result["host_before_fix"] = {k: v for k, v in host_mixed.items() if k != "outcomes"}
    result["host_newly_passing"] = sorted(
        t for t, o in host_head["outcomes"].items() if o == "passed" and host_mixed["outcomes"].get(t) != "passed"
    )
    for t in case.tests:
        key = junit_key(t)
        if host_head["outcomes"].get(key) != "passed":
            problems.append(f"host: {t} does not pass at the fix ({host_head['outcomes'].get(key)})")
        if host_mixed["outcomes"].get(key) == "passed":
            problems.append(f"host: {t} passes before the fix")
    return result


def review_case(
    case: Case, repo: Path, commit: str, parent: str, host_head: dict[str, Any], result: dict[str, Any], timeout: float
) -> dict[str, Any]:
    problems: list[str] = result["problems"]
    paths = [a for p in TEST_PATHS.get(case.repo, ()) for a in ("--test-path", p)]
    fix = review(repo, ["--base", parent, "--head", commit, *paths], timeout)
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as f:
        f.write(git(repo, "diff", commit, parent, "--", *code_files(repo, commit)))
        patch = f.name
    try:
        revert = review(repo, ["--base", commit, "--patch", patch, *paths], timeout)
    finally:
        os.unlink(patch)
    for label, got, exit_want, classes in (
        ("fix", fix, 0, case.fix_classes),
        ("revert", revert, 1, ("broken",)),
    ):
        if got["exit"] != exit_want:
            problems.append(f"{label}: exit {got['exit']}, expected {exit_want}: {got.get('reason') or got['stderr']}")
        rows = got.get("rows", {})
        for t in case.tests:
            if rows.get(t) not in classes:
                problems.append(f"{label}: {t} is {rows.get(t)}, expected {' or '.join(classes)}")
        if got.get("judged") != host_head["collected"] or got.get("head_collected") != host_head["collected"]:
            problems.append(
                f"{label}: judged {got.get('judged')} (head run collected {got.get('head_collected')}),"
                f" plain pytest collected {host_head['collected']}"
            )
        got["case_tests"] = {t: rows.get(t) for t in case.tests}
        got.pop("rows", None)
    result["fix"] = fix
    result["revert"] = revert
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos-dir", type=Path, required=True, help="holds a clone of each repository as owner__name")
    parser.add_argument("--only", nargs="*", default=[], help="owner/name or commit prefixes to run")
    parser.add_argument("--host-only", action="store_true", help="only check the cases with plain pytest")
    parser.add_argument("--timeout", type=float, default=600.0, help="each review side's time limit, seconds")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or c.repo in args.only or any(c.commit.startswith(o) for o in args.only)]
    missing = sorted({c.repo for c in cases if not (args.repos_dir / c.repo.replace("/", "__") / ".git").exists()})
    if missing:
        sys.exit(f"review_real: no clone of {', '.join(missing)} in {args.repos_dir} (as owner__name)")
    results: list[dict[str, Any]] = []
    dest = HERE / "results" / f"review-real-{time.strftime('%Y%m%dT%H%M%S')}.json"
    with tempfile.TemporaryDirectory(prefix="review-real-") as tmp:
        work = Path(tmp)
        for case in cases:
            t0 = time.perf_counter()
            load = os.getloadavg()
            r = run_case(case, args.repos_dir, work, args.host_only, args.timeout)
            r["loadavg_before"] = load
            results.append(r)
            line = f"{case.repo:40} {r['commit']} host {r['host']['collected']:5} tests {r['host']['wall_s']:6.2f}s"
            if not args.host_only:
                line += (
                    f" | fix exit {r['fix']['exit']} judged {r['fix'].get('judged')} {r['fix']['wall_s']:6.1f}s"
                    f" | revert exit {r['revert']['exit']} judged {r['revert'].get('judged')}"
                    f" {r['revert']['wall_s']:6.1f}s"
                )
            print(line + ("  OK" if not r["problems"] else "  PROBLEMS"), flush=True)
            for p in r["problems"]:
                print(f"    {p}", flush=True)
            if args.host_only:
                print(
                    f"    newly passing: {r['host_newly_passing'][:8]}  ({time.perf_counter() - t0:.0f}s)", flush=True
                )
            write(dest, results, args.host_only)  # after each case: a run stopped early keeps its cases
    failed = [r for r in results if r["problems"]]
    print(f"{len(results) - len(failed)}/{len(results)} cases as expected; wrote {dest}")


def write(dest: Path, results: list[dict[str, Any]], host_only: bool) -> None:
    out = {
        "host": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg": os.getloadavg(),
        },
        "host_only": host_only,
        "cases": results,
        "failed": [f"{r['repo']}@{r['commit']}" for r in results if r["problems"]],
    }
    dest.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
